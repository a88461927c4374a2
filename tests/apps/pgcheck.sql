-- SPDX-License-Identifier: Apache-2.0
-- The results of tests/apps/pgwork.sql and of pgbench's single-client run
-- (tests/suites/apps-postgres.sh): counts, sums and digests of every table
-- in a fixed order, and pgbench's invariants. The same before and after a
-- crash (pg_ctl stop -m immediate), with SplitFS and without it.
\set ON_ERROR_STOP 1
\pset footer off
SELECT count(*), sum(qty), sum(length(body)), md5(string_agg(id || ':' || grp || ':' || name || ':' ||
	coalesce(md5(body), '-') || ':' || qty, ',' ORDER BY id)) FROM item;
SELECT count(*), md5(string_agg(id || ':' || md5(data), ',' ORDER BY id)), sum(length(data)) FROM blob;
SELECT count(*), md5(string_agg(id || ':' || name || ':' || qty, ',' ORDER BY id)) FROM item_copy;
SELECT grp, count(*), sum(qty) FROM item WHERE grp < 5 GROUP BY grp ORDER BY grp;
SELECT id, name, qty FROM item_copy WHERE name LIKE 'ITEM-49%' ORDER BY name LIMIT 5;
-- pgbench: every delta of the history is in the balances.
SELECT (SELECT sum(abalance) FROM pgbench_accounts) - (SELECT coalesce(sum(delta), 0) FROM pgbench_history),
       (SELECT sum(bbalance) FROM pgbench_branches) - (SELECT coalesce(sum(delta), 0) FROM pgbench_history),
       (SELECT sum(tbalance) FROM pgbench_tellers) - (SELECT coalesce(sum(delta), 0) FROM pgbench_history),
       (SELECT count(*) FROM pgbench_accounts);
