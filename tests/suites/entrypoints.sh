#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The table of libc entry points that touch file data
# (src/interpose/entrypoints.tsv) against what libc and the library export:
# every served/kernel-view/demote row is exported by libsplitfs.so, every
# exported wrapper has a row, and every libc symbol of the file-data
# families has a row (a new glibc symbol in those families fails the suite).
. "$(dirname "$0")/../lib.sh"
table=$(dirname "$0")/../../src/interpose/entrypoints.tsv
libc=$(ldd /bin/true | awk '/libc.so/ {print $3}')
rows=$(grep -v '^#' "$table" | cut -f1 | sort -u)
ours=$(nm -D --defined-only "$SFS_LIB" | awk '{print $3}' | sed 's/@.*//' | grep -v '^splitfs_version$' | sort -u)
rc=0
while IFS=$'\t' read -r sym class note; do
	case $sym in '#'* | '') continue ;; esac
	case $class in
	served | kernel-view | demote | durable)
		grep -qx "$sym" <<<"$ours" || { echo "FAIL: $sym is '$class' but not exported by the library"; rc=1; } ;;
	internal | out-of-reach) ;;
	*) echo "FAIL: $sym: unknown class '$class'"; rc=1 ;;
	esac
	[ -n "$note" ] || { echo "FAIL: $sym: no note"; rc=1; }
done <"$table"
for s in $ours; do
	grep -qx "$s" <<<"$rows" || { echo "FAIL: the library exports $s, which has no row"; rc=1; }
done
# The file-data families in libc (names, optional 64/v2/_chk/_2 suffixes).
families='^_*(xstat|lxstat|fxstat|fxstatat|xmknod|xmknodat|mkdir|mkdirat|rmdir|link|linkat|symlink|symlinkat|mknod|mknodat|mkfifo|mkfifoat|chmod|lchmod|fchmod|fchmodat|chown|lchown|fchown|fchownat|fflush|fclose|v?dprintf|open|openat|creat|read|pread|readv|preadv|write|pwrite|writev|pwritev|lseek|fsync|fdatasync|sync_file_range|syncfs|sync|ftruncate|truncate|fallocate|posix_fallocate|close|close_range|closefrom|dup|dup2|dup3|fcntl|fstat|stat|lstat|fstatat|statx|unlink|unlinkat|rename|renameat|renameat2|remove|mmap|sendfile|copy_file_range|splice|fork|vfork|_Fork|exec[a-z]*|fexecve|posix_spawnp?|system|popen|fopen|fdopen|freopen|tmpfile|mk(o)?stemps?|msync|munmap|mremap|posix_fadvise|readahead|utime|utimes|utimensat|futimens|futimes|lutimes|futimesat)(64)?(v2)?(_2|_chk)?$'
libc_syms=$(nm -D --defined-only "$libc" | awk '{print $3}' | sed 's/@.*//' | grep -E "$families" | sort -u)
n=0
for s in $libc_syms; do
	n=$((n + 1))
	grep -qx "$s" <<<"$rows" || { echo "FAIL: libc exports $s (a file-data call) and the table has no row"; rc=1; }
done
echo "checked $(wc -l <<<"$rows") rows, $(wc -w <<<"$ours") library exports, $n libc file-data symbols"
exit $rc
