-- SPDX-License-Identifier: Apache-2.0
-- The deterministic part of tests/suites/apps-postgres.sh: tables, indexes,
-- TOAST values, updates, deletes, a HOT chain, VACUUM, CHECKPOINT, COPY
-- out and back in, a rolled-back and a committed transaction. Every result
-- it prints depends only on this file (setseed fixes random()), so the
-- output of a run under SplitFS must equal the kernel run's byte for byte.
-- tests/apps/pgcheck.sql prints the results. psql -v copyfile=PATH.
\set ON_ERROR_STOP 1
\pset footer off
SELECT setseed(0.25);
CREATE TABLE item (id int PRIMARY KEY, grp int NOT NULL, name text NOT NULL, body text,
		   qty bigint NOT NULL DEFAULT 0);
CREATE INDEX item_grp ON item (grp, qty);
INSERT INTO item
SELECT g, g % 97, 'item-' || g, repeat(md5(g::text), 1 + g % 7), (random() * 1000)::bigint
FROM generate_series(1, 60000) AS g;
-- TOAST: values far over the 2 KiB threshold, compressible and not.
CREATE TABLE blob (id int PRIMARY KEY, data text NOT NULL);
INSERT INTO blob
SELECT g, CASE WHEN g % 2 = 0 THEN repeat('x', 200000 + g)
	      ELSE (SELECT string_agg(md5((g * 1000 + i)::text), '') FROM generate_series(1, 3000) AS i)
	 END
FROM generate_series(1, 40) AS g;
CHECKPOINT;
UPDATE item SET qty = qty + 1, body = body || 'u' WHERE id % 3 = 0;
UPDATE item SET qty = qty * 2 WHERE grp = 5; -- HOT updates (no indexed column changed) on some
DELETE FROM item WHERE id % 11 = 0;
UPDATE blob SET data = data || repeat('y', id * 100) WHERE id % 4 = 1;
VACUUM (ANALYZE) item;
BEGIN;
DELETE FROM item WHERE grp < 50;
ROLLBACK;
BEGIN;
INSERT INTO item SELECT g, g % 97, 'late-' || g, NULL, g FROM generate_series(60001, 70000) AS g;
UPDATE item SET name = upper(name) WHERE id BETWEEN 100 AND 5000;
COMMIT;
CREATE TABLE item_copy (LIKE item INCLUDING ALL);
COPY item TO :'copyfile'; -- a file the server writes, on the image
COPY item_copy FROM :'copyfile';
CREATE INDEX item_name ON item_copy (name);
VACUUM FULL blob;
CHECKPOINT;
