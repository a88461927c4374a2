#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Metadata-heavy utilities (the paper's §5 utilities: git, tar, rsync, and
# cp -a) on a generated tree on the image: FILES files of 0-64 KiB of text
# in DIRS directories (bench/src/mktree.c, deterministic, made without the
# library).
# Each step is one timed command under $RUN, after a `sync -f` of the image:
#   tar_create     tar -cf of the tree into an archive on the image
#   tar_extract    tar -xf of that archive into another directory
#   rsync          rsync -a of the tree into another directory
#   cp_a           cp -a of the tree into another directory
#   git_add_commit git add -A and git commit in the tree (after git init)
#   script         a shell script of small commands (wc, cp, grep, cat) over
#                  the first SCRIPT_FILES files of the tree: one process
#                  start per command, what build tools and scripts pay
#   build          make -j2 of this project by its own Makefile (gcc, as
#                  and ld started per source), in a copy of its sources made
#                  without the library: the library and the CLI (quick and
#                  smoke: the CLI alone); the CLI it built must run
# Seconds, lower is better; then spawn_us: a process start alone, the
# median µs of posix_spawn+wait of /bin/true from a program under $RUN
# (bench/src/spawn.c), and fork_us: the same by fork+execve, as bash and
# make start a command (the pages written between the fork and the exec
# are copied), lower is better. Each copy is compared with the tree (diff -r),
# and the repository is checked (git fsck, the index lists every file, the
# work tree is clean), without the library; a failed step or check exits
# non-zero and prints nothing.
# needs: tar git rsync diff bc make gcc
set -eu -o pipefail
shopt -s inherit_errexit
case $BENCH_SCALE in
smoke) files=300 dirs=10 script_files=20 spawns=200 build=build/splitfs ;;
quick) files=600 dirs=30 script_files=50 spawns=500 build=build/splitfs ;;
*) files=3000 dirs=100 script_files=200 spawns=2000 build=all ;;
esac
tmp=$(mktemp -d /tmp/splitfs-bench-utils.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# git reads no system or user configuration; fixed identities and dates.
export GIT_CONFIG_NOSYSTEM=1 HOME=$tmp XDG_CONFIG_HOME=$tmp \
	GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' \
	GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'

D=$BENCH_DIR
"$BENCH_BIN/mktree" "$D/tree" "$files" "$dirs" 64

results=
# timed METRIC CMD...: runs CMD (already prefixed with $RUN where wanted),
# adds its wall time in seconds to the results.
timed() {
	local metric=$1 t0 t1
	shift
	sync -f "$D"
	t0=$(date +%s%N)
	"$@"
	t1=$(date +%s%N)
	results+=$(printf '{"metric":"%s","value":%.4f,"unit":"s","better":"lower"}' "$metric" \
		"$(echo "($t1 - $t0) / 1000000000" | bc -l)")$'\n'
}
same() { diff -r "$1" "$2" >/dev/null || { echo "utils: $2 differs from $1" >&2; exit 1; }; }

timed tar_create $RUN tar -cf "$D/tree.tar" -C "$D" tree
mkdir "$D/untar"
timed tar_extract $RUN tar -xf "$D/tree.tar" -C "$D/untar"
same "$D/tree" "$D/untar/tree"

timed rsync $RUN rsync -a "$D/tree/" "$D/rsync/"
same "$D/tree" "$D/rsync"

timed cp_a $RUN cp -a "$D/tree" "$D/cp"
same "$D/tree" "$D/cp"

cd "$D/tree"
$RUN git init -q
g() { $RUN git -c gc.auto=0 -c maintenance.auto=false "$@"; }
git_add_commit() { g add -A && g commit -q -m tree; }
timed git_add_commit git_add_commit
git fsck --no-progress --no-dangling
n=$(git ls-files | wc -l)
[ "$n" = "$files" ] || { echo "utils: git lists $n files, the tree has $files" >&2; exit 1; }
[ -z "$(git status --porcelain)" ] || { echo "utils: git status shows changes after the commit" >&2; exit 1; }

# The script's copies are compared with their sources, and its counts with
# what the same commands print without the library.
script='n=0; for f in "$@"; do n=$((n + 1)); wc -c < "$f"; cp "$f" "$0/$n"; grep -c e "$f" || true; cat "$f" > /dev/null; done'
mkdir "$D/script" "$D/script.check"
list=$(cd "$D/tree" && find . -type f ! -path './.git/*' | LC_ALL=C sort | sed -n "1,${script_files}p")
cd "$D/tree"
# shellcheck disable=SC2086 # the list is split into words on purpose (names have no blanks)
timed script $RUN sh -c "$script > $D/script.out" "$D/script" $list
# shellcheck disable=SC2086
sh -c "$script" "$D/script.check" $list > "$D/script.expect"
cmp -s "$D/script.out" "$D/script.expect" || { echo "utils: the script printed other counts under the library" >&2; exit 1; }
n=0
for f in $list; do
	n=$((n + 1))
	cmp -s "$f" "$D/script/$n" || { echo "utils: the script's copy $n differs from $f" >&2; exit 1; }
done
cd "$D"

mkdir "$D/proj"
(cd "$BENCH_SRC/.." && cp -a Makefile splitfs.pc.in src cli include "$D/proj/")
timed build $RUN make -C "$D/proj" -j2 -s $build
"$D/proj/build/splitfs" version >/dev/null || { echo "utils: the CLI built under the library does not run" >&2; exit 1; }

results+=$($RUN "$BENCH_BIN/spawn" "$D" "$spawns" /bin/true | grep '"spawn_us"')$'\n'
results+=$($RUN "$BENCH_BIN/spawn" --fork "$D" "$spawns" /bin/true | grep '"fork_us"')$'\n'
printf '%s' "$results"
