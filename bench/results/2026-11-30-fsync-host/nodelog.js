// SPDX-License-Identifier: Apache-2.0
// A log synced with fs.fsyncSync: N records of 1,000 bytes, each written
// and fsynced; prints µs per record.  node nodelog.js FILE N
const fs = require('fs');
const p = process.argv[2], n = +process.argv[3];
const rec = Buffer.alloc(1000, 'x');
const fd = fs.openSync(p, 'a');
const t = process.hrtime.bigint();
for (let i = 0; i < n; i++) { fs.writeSync(fd, rec); fs.fsyncSync(fd); }
const el = Number(process.hrtime.bigint() - t) / n / 1000;
fs.closeSync(fd); fs.unlinkSync(p);
console.log(el.toFixed(1));
