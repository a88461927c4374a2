# SPDX-License-Identifier: Apache-2.0
# A log synced with os.fsync: N records of 1,000 bytes, each written and
# fsynced; prints µs per record.  pylog.py FILE N
import os, sys, time
p = sys.argv[1]; n = int(sys.argv[2]); rec = b"x" * 1000 + b"\n"
f = open(p, "ab", buffering=0)
t = time.perf_counter()
for i in range(n):
    f.write(rec); os.fsync(f.fileno())
el = (time.perf_counter() - t) / n * 1e6
f.close(); os.unlink(p)
print("%.1f" % el)
