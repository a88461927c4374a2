#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The benchmark harness works end to end: bench/run.sh --smoke (every
# workload at its smallest size, one repetition, every configuration) on its
# own image in a temporary mount point, with its results in a temporary
# folder (never bench/results, never the test image at $SFS_MNT). Then:
#   - run.sh exits 0 and every line of raw.jsonl is a JSON object;
#   - every workload run has results for kernel and for posix, and no line
#     says `failed`;
#   - table.md has a section per workload and a row per metric, and an
#     overhead table in each section whose results carry a memcpy floor;
#   - machine.json has the primitives' costs (bench/src/primitives.c), each
#     a positive number, and table.md says them;
#   - at least one PNG plot, when matplotlib is installed;
#   - no MadFS state left in /dev/shm (madfs_*: the harness's madfs
#     configuration, when MadFS is built; skipped otherwise).
# A workload whose application is not installed is left out (--only) with a
# line saying so; which application a workload needs comes from a
# `# needs: CMD... [file:PATH...] [py:MODULE...]` line in the workload
# script or, for the application workloads that have none, from the table
# below. (A missing C++ library such as LevelDB's headers makes
# `make bench-progs` fail, and bench/run.sh with it: then this suite fails.)
# SFS_BENCH_SMOKE_ONLY=w1,w2 narrows the run (for debugging this suite).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || die "no project root"
rmdir "$WORK" 2>/dev/null # nothing runs on the test image

PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || die "python3 not found (tests/deps.sh installs it)"

T=$(mktemp -d /tmp/sfs-bench-smoke.XXXXXX)
chmod 711 "$T" # the pgbench workload's server runs as the user postgres
MNT=$T/mnt
OUT=$T/out
bpid=
# On the way out (also when tests/run.sh's timeout ends this suite), the
# harness and its workloads go first (their own process group), then the image.
finish() {
	[ -n "$bpid" ] && kill -TERM -- "-$bpid" 2>/dev/null && sleep 2 && kill -KILL -- "-$bpid" 2>/dev/null
	"$SFS_CLI" image down "$MNT" >/dev/null 2>&1
	"$SFS_CLI" image down "$MNT-sync" >/dev/null 2>&1 # kernel-sync's (bench/run.sh)
	rm -rf "$T"
}
trap finish EXIT
trap 'exit 143' TERM INT

# What an application workload needs when its script does not say.
declare -A builtin_needs=(
	[ycsb]="file:/usr/include/leveldb/db.h g++"
	[redis]="redis-server redis-benchmark redis-cli"
	[tpcc]="file:/usr/bin/python3 py:sqlite3"
	[utils]="tar git rsync diff bc"
)
missing_for() { # WORKLOAD -> prints what is missing (nothing if all there)
	local w=$1 needs item
	needs=$(sed -n 's/^# needs://p' "bench/workloads/$w.sh" | head -n 1)
	[ -n "$needs" ] || needs=${builtin_needs[$w]:-}
	for item in $needs; do
		case $item in
		file:*) [ -e "${item#file:}" ] || printf '%s ' "${item#file:}" ;;
		py:*) "$PY" -c "import ${item#py:}" 2>/dev/null || printf 'python3-%s ' "${item#py:}" ;;
		*) command -v "$item" >/dev/null 2>&1 || printf '%s ' "$item" ;;
		esac
	done
}

only=()
for s in bench/workloads/*.sh; do
	w=$(basename "$s" .sh)
	if [ -n "${SFS_BENCH_SMOKE_ONLY:-}" ] && [[ ",$SFS_BENCH_SMOKE_ONLY," != *",$w,"* ]]; then
		continue
	fi
	m=$(missing_for "$w")
	if [ -n "$m" ]; then
		echo "excluded $w: not installed: $m(bench/deps.sh installs it)"
		continue
	fi
	only+=("$w")
done
[ ${#only[@]} -gt 0 ] || die "no workload can run"
list=$(IFS=,; echo "${only[*]}")
echo "workloads: $list"

shm0=$(ls /dev/shm | grep '^madfs_' | sort)
t0=$(date +%s)
BENCH_OUT=$OUT BENCH_MNT=$MNT BENCH_IMAGE_SIZE=${BENCH_IMAGE_SIZE:-3G} BENCH_TIMEOUT=${BENCH_TIMEOUT:-300} \
	setsid ./bench/run.sh --smoke --only "$list" >"$T/run.log" 2>&1 &
bpid=$!
wait "$bpid"
rc=$?
bpid=
sed 's/^/  | /' "$T/run.log"
echo "bench/run.sh --smoke: exit $rc, $(($(date +%s) - t0)) s"
for f in "$OUT"/stats/*.err; do # what the workloads said on stderr
	[ -s "$f" ] && { echo "--- $(basename "$f"):"; tail -n 5 "$f" | sed 's/^/  | /'; }
done
[ $rc = 0 ] || die "bench/run.sh --smoke exited $rc"
left=$(comm -13 <(echo "$shm0") <(ls /dev/shm | grep '^madfs_' | sort))
[ -z "$left" ] || die "MadFS state left in /dev/shm: $(echo $left)"
[ -s "$OUT/raw.jsonl" ] || die "no raw.jsonl"
[ -s "$OUT/table.md" ] || die "no table.md"

matplotlib=0
"$PY" -c 'import matplotlib' 2>/dev/null && matplotlib=1

"$PY" - "$OUT" "$list" "$matplotlib" <<'PY'
import glob, json, os, re, sys
out, workloads, matplotlib = sys.argv[1], sys.argv[2].split(","), sys.argv[3] == "1"
bad = []
rows = []
with open(os.path.join(out, "raw.jsonl")) as f:
    for n, line in enumerate(f, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError as e:
            bad.append("raw.jsonl line %d is not JSON (%s): %s" % (n, e, line.strip()[:200]))
            continue
        if not isinstance(r, dict):
            bad.append("raw.jsonl line %d is not an object" % n)
            continue
        if "failed" in r:
            bad.append("%s/%s rep %s failed (exit %s)" % (r.get("workload"), r.get("config"), r.get("rep"), r["failed"]))
        elif "skipped" not in r:
            for k in ("workload", "config", "metric", "value"):
                if k not in r:
                    bad.append("raw.jsonl line %d has no %r: %s" % (n, k, line.strip()[:200]))
            if isinstance(r.get("value"), bool) or not isinstance(r.get("value"), (int, float)):
                bad.append("raw.jsonl line %d: value is not a number" % n)
            rows.append(r)
metrics = {}
for w in workloads:
    for c in ("kernel", "posix"):
        if not any(r.get("workload") == w and r.get("config") == c for r in rows):
            bad.append("%s: no results for %s" % (w, c))
for r in rows:
    metrics.setdefault(r.get("workload"), set()).add(r.get("metric"))
# table.md: "## workload" sections, "| metric | ..." rows.
sections, cur, overhead = {}, None, set()
with open(os.path.join(out, "table.md")) as f:
    for line in f:
        m = re.match(r"^## (\S+)", line)
        if m:
            cur = sections.setdefault(m.group(1), set())
            name = m.group(1)
        elif cur is not None and line.startswith("Overhead over the floor"):
            overhead.add(name)
        elif cur is not None and line.startswith("| ") and not line.startswith("| metric |"):
            cur.add(line.split("|")[1].strip())
for w, ms in sorted(metrics.items()):
    if w not in sections:
        bad.append("table.md has no section for %s" % w)
        continue
    for m in sorted(ms - sections[w]):
        bad.append("table.md: %s has no row for %s" % (w, m))
for w in sorted({r.get("workload") for r in rows if "floor_ns" in r} - overhead):
    bad.append("table.md: %s has a floor but no overhead table" % w)
with open(os.path.join(out, "machine.json")) as f:
    prim = json.load(f).get("primitives")
if not isinstance(prim, dict) or not prim:
    bad.append("machine.json has no primitives")
else:
    for k, v in sorted(prim.items()):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            bad.append("machine.json: primitive %s is %r" % (k, v))
    with open(os.path.join(out, "table.md")) as f:
        if not any(line.startswith("Primitives there") for line in f):
            bad.append("table.md does not say the primitives")
pngs = glob.glob(os.path.join(out, "*.png"))
if matplotlib and not pngs:
    bad.append("matplotlib is installed but there is no PNG in %s" % out)
print("%d result lines, %d workloads, %d metrics, %d PNG%s" % (
    len(rows), len(metrics), sum(len(v) for v in metrics.values()), len(pngs),
    "" if matplotlib else " (matplotlib not installed: no plots expected)"))
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] || die "benchmark results incomplete (above)"
sed -n '/^## /,$p' "$OUT/table.md"
echo "ok bench smoke ($list)"
