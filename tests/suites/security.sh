#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Other users (issue 13, items 13-16): what user `nobody` can put in
# <root>/.splitfs (mode 1777, shared like /tmp) or /dev/shm never makes a
# root process under the library write into a file it should not, use a
# file nobody made, or slow down. Each attack is planted as nobody
# (runuser), with the tool tests/security/plant.c (valid checksums, this
# mount's ids, the target's true inode and generation: the strongest
# attacker), then a root process runs under the library, and `splitfs
# recover` runs as root; the victims must be untouched.
. "$(dirname "$0")/../lib.sh"
PLANT=$SFS_BUILD/security/plant
[ -x "$PLANT" ] || die "$PLANT not built (make tests)"
command -v runuser >/dev/null || skip "no runuser (util-linux)"
id nobody >/dev/null 2>&1 || skip "no user nobody"
S=$SFS_MNT/.splitfs
mkdir -p "$S"
chmod 1777 "$S"
as_nobody() { runuser -u nobody -- "$@"; }
rc=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; rc=1; }
igen() { python3 -c 'import fcntl,struct,sys; f=open(sys.argv[1],"rb"); print(struct.unpack("I",fcntl.ioctl(f,0x80087601,b"\0"*8)[:4])[0])' "$1"; }
dev() { python3 -c 'import os,sys; print(os.stat(sys.argv[1]).st_dev)' "$1"; }
# A root process under the library: its start-up recovery, a sync-mode
# write (the log), a few appends.
root_runs() {
	SPLITFS_MODE=${1:-posix} sfs_run sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do echo line\$i >> '$WORK/root.log'; done" ||
		bad "a root process under the library failed"
}

# --- 13: planted logs ------------------------------------------------------------
echo "root's secret" >/tmp/sfs-victim.$$
chmod 600 /tmp/sfs-victim.$$
echo "root's data" >"$WORK/victim"
chmod 600 "$WORK/victim"
cp /tmp/sfs-victim.$$ "$WORK/victim.want-out"
cp "$WORK/victim" "$WORK/victim.want-in"
as_nobody "$PLANT" log "$S/log.4242.1" /tmp/sfs-victim.$$ "$(stat -c %i /tmp/sfs-victim.$$)" \
	"$(igen /tmp/sfs-victim.$$ 2>/dev/null || echo 0)" || die "planting a log as nobody"
as_nobody "$PLANT" log "$S/log.4243.1" "$WORK/victim" "$(stat -c %i "$WORK/victim")" \
	"$(igen "$WORK/victim")" || die "planting a log as nobody"
root_runs sync
"$SFS_CLI" recover --root "$SFS_MNT" >/dev/null 2>&1
cmp -s /tmp/sfs-victim.$$ "$WORK/victim.want-out" && ok "a log nobody planted does not write a file outside the root" ||
	bad "nobody's log wrote into /tmp/sfs-victim (root, 0600, outside the root)"
cmp -s "$WORK/victim" "$WORK/victim.want-in" && ok "a log nobody planted does not write root's file in the root" ||
	bad "nobody's log wrote into root's file"
rm -f /tmp/sfs-victim.$$ "$S"/log.424[23].1

# --- 14: no shared segment anyone can write ------------------------------------------
# What a running library process maps from /dev/shm (an older SplitFS's
# registry was mode 0666, mapped read-write by every process).
SPLITFS_MODE=sync "$SFS_CLI" run --root "$SFS_MNT" -- sh -c "echo x > '$WORK/shm.probe'; exec sleep 2" &
pid=$!
sleep 1
shm=$(awk '$6 ~ /^\/dev\/shm\// {print $6}' "/proc/$pid/maps" 2>/dev/null | sort -u)
wait $pid
w=""
for f in $shm; do
	[ -n "$(find "$f" -perm -o+w 2>/dev/null)" ] && w="$w $f"
done
[ -z "$w" ] && ok "no world-writable segment of /dev/shm mapped ($(echo $shm | wc -w) mapped)" ||
	bad "world-writable and mapped:$w"

# --- 15: free logs -------------------------------------------------------------------------
as_nobody "$PLANT" free "$S/log.free.4244.1" $((16 << 20)) || die "planting a free log as nobody"
before=$(stat -c '%U %s %Y' "$S/log.free.4244.1"; cksum <"$S/log.free.4244.1")
root_runs sync
after=$(stat -c '%U %s %Y' "$S/log.free.4244.1" 2>/dev/null; cksum <"$S/log.free.4244.1" 2>/dev/null)
[ "$before" = "$after" ] && ok "a free log nobody made is not used by root" ||
	bad "root took nobody's free log (before: $before; after: $after)"
mine=$(find "$S" -maxdepth 1 -name 'log.*' -user root -perm 600 | head -1)
[ -n "$mine" ] && ok "root's log is its own (root, 0600)" || bad "root made no private log"
rm -f "$S/log.free.4244.1"

# --- 16: a sparse log planted (by the same user even) is not read ---------------------
"$PLANT" sparse "$S/log.4245.1" $((4 << 30)) || die "planting a sparse log"
root_runs posix
[ -e "$S/log.4245.1" ] && ok "a sparse 4 GiB log is not taken for a log (left alone)" ||
	bad "the sparse log was read and recovered"
rm -f "$S/log.4245.1"

# --- staging stores ------------------------------------------------------------------------
# Under root's own store name, for root's file: root's process must not use
# it (it belongs to nobody), and must still write its file right.
echo -n >"$WORK/victim2"
d=$(dev "$WORK/victim2")
i=$(stat -c %i "$WORK/victim2")
as_nobody "$PLANT" store "$S/stage.0.$d.$i" "$WORK/victim2" "$d" "$i" 0 ||
	die "planting a store as nobody"
sfs_run sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do echo line\$i >> '$WORK/victim2'; done"
printf 'line%d\n' 1 2 3 4 5 6 7 8 9 10 >"$WORK/victim2.want"
cmp -s "$WORK/victim2" "$WORK/victim2.want" && ok "a store nobody planted under root's name is not adopted" ||
	bad "root's file has: $(head -c 80 "$WORK/victim2" | od -c | head -2)"
rm -f "$S/stage.0.$d.$i"
# Under nobody's own name, naming root's file: root's `splitfs recover`
# (which takes every user's stores) must not put it into root's file.
as_nobody "$PLANT" store "$S/stage.65534.$d.$i" "$WORK/victim2" "$d" "$i" "$(stat -c %s "$WORK/victim2")" ||
	die "planting a store as nobody"
"$SFS_CLI" recover --root "$SFS_MNT" >/dev/null 2>&1
cmp -s "$WORK/victim2" "$WORK/victim2.want" && ok "root's recover does not write nobody's store into root's file" ||
	bad "nobody's store went into root's file"
rm -f "$S"/stage.65534.* "$S"/orphan.65534.*
exit $rc
