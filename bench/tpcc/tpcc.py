#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A small TPC-C-like driver on SQLite (the SplitFS paper's §5 TPC-C on
SQLite), with Python's sqlite3 module.

    tpcc.py DB --sync NORMAL|FULL --warehouses W --customers C --items I
            --transactions N [--seed S]

It creates DB (which must not exist) in WAL mode with the given
synchronous setting, loads the nine TPC-C tables scaled down (W warehouses,
10 districts each, C customers and C initial orders per district, I items
and I stock rows per warehouse, 5-15 lines per order, the last 30% of the
orders undelivered), then runs N transactions of the standard mix, each in
its own SQLite transaction: NewOrder 45%, Payment 43%, OrderStatus 4%,
Delivery 4%, StockLevel 4% (keys by TPC-C's NURand, 1% of NewOrders roll
back on an unknown item, Payment and OrderStatus find 60% of customers by
last name). Money is kept in integer cents. Fixed seed.

Afterwards it checks TPC-C's consistency conditions 1-9 (clause 3.3.2:
W_YTD = sum(D_YTD); D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID); new orders
contiguous; sum(O_OL_CNT) = count of order lines; undelivered <=> a
NEW-ORDER row; lines per order = O_OL_CNT; line delivered <=> order
delivered; W_YTD = sum(H_AMOUNT) per warehouse and D_YTD per district),
SQLite's integrity_check, and that the database reopened from disk shows
the same totals and passes the same checks. Only then does it print, as
JSON lines, the load time (s) and the transaction rate (txn/s):
    {"metric":"tpcc_normal","value":812.3,"unit":"txn/s","better":"higher"}
Exit status 1, with nothing on stdout, on any error or violated condition.
"""
import argparse
import json
import os
import random
import sqlite3
import sys
import time

DISTRICTS = 10
SYLLABLES = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"]
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
DIST_COLS = ["s_dist_%02d" % d for d in range(1, DISTRICTS + 1)]

SCHEMA = """
CREATE TABLE warehouse (w_id INTEGER PRIMARY KEY, w_name TEXT, w_street_1 TEXT, w_street_2 TEXT,
  w_city TEXT, w_state TEXT, w_zip TEXT, w_tax INTEGER, w_ytd INTEGER);
CREATE TABLE district (d_w_id INTEGER, d_id INTEGER, d_name TEXT, d_street_1 TEXT, d_street_2 TEXT,
  d_city TEXT, d_state TEXT, d_zip TEXT, d_tax INTEGER, d_ytd INTEGER, d_next_o_id INTEGER,
  PRIMARY KEY (d_w_id, d_id)) WITHOUT ROWID;
CREATE TABLE customer (c_w_id INTEGER, c_d_id INTEGER, c_id INTEGER, c_first TEXT, c_middle TEXT,
  c_last TEXT, c_street_1 TEXT, c_street_2 TEXT, c_city TEXT, c_state TEXT, c_zip TEXT, c_phone TEXT,
  c_since INTEGER, c_credit TEXT, c_credit_lim INTEGER, c_discount INTEGER, c_balance INTEGER,
  c_ytd_payment INTEGER, c_payment_cnt INTEGER, c_delivery_cnt INTEGER, c_data TEXT,
  PRIMARY KEY (c_w_id, c_d_id, c_id)) WITHOUT ROWID;
CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE TABLE history (h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER,
  h_w_id INTEGER, h_date INTEGER, h_amount INTEGER, h_data TEXT);
CREATE TABLE orders (o_w_id INTEGER, o_d_id INTEGER, o_id INTEGER, o_c_id INTEGER, o_entry_d INTEGER,
  o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER,
  PRIMARY KEY (o_w_id, o_d_id, o_id)) WITHOUT ROWID;
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
CREATE TABLE new_order (no_w_id INTEGER, no_d_id INTEGER, no_o_id INTEGER,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)) WITHOUT ROWID;
CREATE TABLE order_line (ol_w_id INTEGER, ol_d_id INTEGER, ol_o_id INTEGER, ol_number INTEGER,
  ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d INTEGER, ol_quantity INTEGER,
  ol_amount INTEGER, ol_dist_info TEXT, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) WITHOUT ROWID;
CREATE TABLE item (i_id INTEGER PRIMARY KEY, i_im_id INTEGER, i_name TEXT, i_price INTEGER, i_data TEXT);
CREATE TABLE stock (s_w_id INTEGER, s_i_id INTEGER, s_quantity INTEGER, %s, s_ytd INTEGER,
  s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data TEXT, PRIMARY KEY (s_w_id, s_i_id)) WITHOUT ROWID;
""" % ", ".join("%s TEXT" % c for c in DIST_COLS)


class Failure(Exception):
    pass


class Rand:
    """TPC-C's random functions (clause 2.1.6, 4.3.2) on a seeded generator."""

    def __init__(self, seed, customers, items):
        self.r = random.Random(seed)
        # NURand's A for the scaled populations: 1023 for 3000 customers and
        # 8191 for 100000 items at full scale, the same proportion below.
        self.a_cust = self._a(customers // 2)
        self.a_item = self._a(items // 12)
        self.c_last, self.c_id, self.c_item = (self.r.randint(0, 255), self.r.randint(0, 1023),
                                               self.r.randint(0, 8191))
        self.last_names = min(999, customers - 1)

    @staticmethod
    def _a(n):
        a = 1
        while a * 2 <= max(n, 2):
            a *= 2
        return a - 1

    def uniform(self, lo, hi):
        return self.r.randint(lo, hi)

    def nurand(self, a, c, lo, hi):
        return (((self.r.randint(0, a) | self.r.randint(lo, hi)) + c) % (hi - lo + 1)) + lo

    def customer_id(self, customers):
        return self.nurand(self.a_cust, self.c_id, 1, customers)

    def item_id(self, items):
        return self.nurand(self.a_item, self.c_item, 1, items)

    def last_name_number(self):
        return self.nurand(255, self.c_last, 0, self.last_names)

    def astring(self, lo, hi):
        return "".join(self.r.choices(ALNUM, k=self.r.randint(lo, hi)))

    def nstring(self, lo, hi):
        return "".join(self.r.choices("0123456789", k=self.r.randint(lo, hi)))

    def data(self, lo, hi):
        s = self.astring(lo, hi)
        if self.r.randint(1, 10) == 1:  # 10% carry "ORIGINAL"
            p = self.r.randint(0, len(s) - 8)
            s = s[:p] + "ORIGINAL" + s[p + 8:]
        return s


def last_name(n):
    return SYLLABLES[n // 100] + SYLLABLES[(n // 10) % 10] + SYLLABLES[n % 10]


def load(db, rnd, warehouses, customers, items):
    now = int(time.time())
    cur = db.cursor()
    cur.execute("BEGIN")
    cur.executemany("INSERT INTO item VALUES (?,?,?,?,?)",
                    ((i, rnd.uniform(1, 10000), rnd.astring(14, 24), rnd.uniform(100, 10000), rnd.data(26, 50))
                     for i in range(1, items + 1)))
    for w in range(1, warehouses + 1):
        # W_YTD = sum(D_YTD) = sum(H_AMOUNT) of the initial history rows (10.00 each).
        d_ytd = customers * 1000
        cur.execute("INSERT INTO warehouse VALUES (?,?,?,?,?,?,?,?,?)",
                    (w, rnd.astring(6, 10), rnd.astring(10, 20), rnd.astring(10, 20), rnd.astring(10, 20),
                     rnd.astring(2, 2), rnd.nstring(4, 4) + "11111", rnd.uniform(0, 2000), d_ytd * DISTRICTS))
        cur.executemany("INSERT INTO stock VALUES (%s)" % ",".join("?" * 17),
                        ((w, i, rnd.uniform(10, 100), *[rnd.astring(24, 24) for _ in DIST_COLS], 0, 0, 0,
                          rnd.data(26, 50)) for i in range(1, items + 1)))
        for d in range(1, DISTRICTS + 1):
            cur.execute("INSERT INTO district VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        (w, d, rnd.astring(6, 10), rnd.astring(10, 20), rnd.astring(10, 20), rnd.astring(10, 20),
                         rnd.astring(2, 2), rnd.nstring(4, 4) + "11111", rnd.uniform(0, 2000), d_ytd,
                         customers + 1))
            rows = []
            for c in range(1, customers + 1):
                n = c - 1 if c <= 1000 else rnd.nurand(255, rnd.c_last, 0, 999)
                rows.append((w, d, c, rnd.astring(8, 16), "OE", last_name(n), rnd.astring(10, 20),
                             rnd.astring(10, 20), rnd.astring(10, 20), rnd.astring(2, 2),
                             rnd.nstring(4, 4) + "11111", rnd.nstring(16, 16), now,
                             "BC" if rnd.uniform(1, 10) == 1 else "GC", 5000000, rnd.uniform(0, 5000), -1000,
                             1000, 1, 0, rnd.astring(300, 500)))
            cur.executemany("INSERT INTO customer VALUES (%s)" % ",".join("?" * 21), rows)
            cur.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?,?)",
                            ((c, d, w, d, w, now, 1000, rnd.astring(12, 24)) for c in range(1, customers + 1)))
            perm = list(range(1, customers + 1))
            rnd.r.shuffle(perm)
            undelivered = customers - customers * 3 // 10  # the last 30% are new orders
            orders, lines, new = [], [], []
            for o in range(1, customers + 1):
                cnt = rnd.uniform(5, 15)
                delivered = o <= undelivered
                orders.append((w, d, o, perm[o - 1], now, rnd.uniform(1, 10) if delivered else None, cnt, 1))
                for n in range(1, cnt + 1):
                    lines.append((w, d, o, n, rnd.uniform(1, items), w, now if delivered else None, 5,
                                  0 if delivered else rnd.uniform(1, 999999), rnd.astring(24, 24)))
                if not delivered:
                    new.append((w, d, o))
            cur.executemany("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?)", orders)
            cur.executemany("INSERT INTO order_line VALUES (?,?,?,?,?,?,?,?,?,?)", lines)
            cur.executemany("INSERT INTO new_order VALUES (?,?,?)", new)
    cur.execute("COMMIT")


class Terminal:
    """The five transactions (clause 2.4-2.8), each one SQLite transaction."""

    def __init__(self, db, rnd, warehouses, customers, items):
        self.db, self.rnd = db, rnd
        self.warehouses, self.customers, self.items = warehouses, customers, items
        self.rollbacks = 0

    def other_warehouse(self, w):
        if self.warehouses == 1:
            return w
        o = self.rnd.uniform(1, self.warehouses - 1)
        return o if o < w else o + 1

    def find_customer(self, cur, w, d):
        """60% by last name (the middle one by first name), else by id."""
        if self.rnd.uniform(1, 100) <= 60:
            name = last_name(self.rnd.last_name_number())
            rows = cur.execute("SELECT c_id FROM customer WHERE c_w_id=? AND c_d_id=? AND c_last=? "
                               "ORDER BY c_first", (w, d, name)).fetchall()
            if not rows:
                raise Failure("no customer named %s in %d/%d" % (name, w, d))
            return rows[(len(rows) - 1) // 2][0]
        return self.rnd.customer_id(self.customers)

    def new_order(self):
        rnd, cur = self.rnd, self.db.cursor()
        w, d, c = rnd.uniform(1, self.warehouses), rnd.uniform(1, DISTRICTS), rnd.customer_id(self.customers)
        cnt = rnd.uniform(5, 15)
        rollback = rnd.uniform(1, 100) == 1
        lines = []
        for n in range(cnt):
            i = self.items + 1 if rollback and n == cnt - 1 else rnd.item_id(self.items)
            supply = w if rnd.uniform(1, 100) > 1 else self.other_warehouse(w)
            lines.append((i, supply, rnd.uniform(1, 10)))
        now = int(time.time())
        cur.execute("BEGIN")
        one(cur, "SELECT w_tax FROM warehouse WHERE w_id=?", (w,))
        _, o_id = one(cur, "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id=? AND d_id=?", (w, d))
        cur.execute("UPDATE district SET d_next_o_id=? WHERE d_w_id=? AND d_id=?", (o_id + 1, w, d))
        one(cur, "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id=? AND c_d_id=? AND c_id=?",
            (w, d, c))
        all_local = int(all(s == w for _, s, _ in lines))
        cur.execute("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?)", (w, d, o_id, c, now, None, cnt, all_local))
        cur.execute("INSERT INTO new_order VALUES (?,?,?)", (w, d, o_id))
        for n, (i, supply, qty) in enumerate(lines, 1):
            item = cur.execute("SELECT i_price, i_name, i_data FROM item WHERE i_id=?", (i,)).fetchone()
            if item is None:  # the 1% with an unused item number: roll back
                cur.execute("ROLLBACK")
                self.rollbacks += 1
                return
            price = item[0]
            s_qty, dist, _ = one(cur, "SELECT s_quantity, %s, s_data FROM stock WHERE s_w_id=? AND s_i_id=?"
                                 % DIST_COLS[d - 1], (supply, i))
            s_qty = s_qty - qty if s_qty >= qty + 10 else s_qty - qty + 91
            cur.execute("UPDATE stock SET s_quantity=?, s_ytd=s_ytd+?, s_order_cnt=s_order_cnt+1, "
                        "s_remote_cnt=s_remote_cnt+? WHERE s_w_id=? AND s_i_id=?",
                        (s_qty, qty, int(supply != w), supply, i))
            amount = qty * price  # the terminal's total (tax, discount) is not needed here
            cur.execute("INSERT INTO order_line VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (w, d, o_id, n, i, supply, None, qty, amount, dist))
        cur.execute("COMMIT")

    def payment(self):
        rnd, cur = self.rnd, self.db.cursor()
        w, d = rnd.uniform(1, self.warehouses), rnd.uniform(1, DISTRICTS)
        if rnd.uniform(1, 100) <= 85:
            c_w, c_d = w, d
        else:
            c_w, c_d = self.other_warehouse(w), rnd.uniform(1, DISTRICTS)
        amount = rnd.uniform(100, 500000)
        cur.execute("BEGIN")
        c = self.find_customer(cur, c_w, c_d)
        cur.execute("UPDATE warehouse SET w_ytd=w_ytd+? WHERE w_id=?", (amount, w))
        cur.execute("UPDATE district SET d_ytd=d_ytd+? WHERE d_w_id=? AND d_id=?", (amount, w, d))
        credit, data = one(cur, "SELECT c_credit, c_data FROM customer WHERE c_w_id=? AND c_d_id=? AND c_id=?",
                           (c_w, c_d, c))
        cur.execute("UPDATE customer SET c_balance=c_balance-?, c_ytd_payment=c_ytd_payment+?, "
                    "c_payment_cnt=c_payment_cnt+1 WHERE c_w_id=? AND c_d_id=? AND c_id=?",
                    (amount, amount, c_w, c_d, c))
        if credit == "BC":
            data = ("%d %d %d %d %d %d|" % (c, c_d, c_w, d, w, amount) + data)[:500]
            cur.execute("UPDATE customer SET c_data=? WHERE c_w_id=? AND c_d_id=? AND c_id=?", (data, c_w, c_d, c))
        cur.execute("INSERT INTO history VALUES (?,?,?,?,?,?,?,?)",
                    (c, c_d, c_w, d, w, int(time.time()), amount, "payment"))
        cur.execute("COMMIT")

    def order_status(self):
        rnd, cur = self.rnd, self.db.cursor()
        w, d = rnd.uniform(1, self.warehouses), rnd.uniform(1, DISTRICTS)
        cur.execute("BEGIN")
        c = self.find_customer(cur, w, d)
        one(cur, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id=? AND c_d_id=? AND c_id=?",
            (w, d, c))
        o = cur.execute("SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id=? AND o_d_id=? AND o_c_id=? "
                        "ORDER BY o_id DESC LIMIT 1", (w, d, c)).fetchone()
        if o is not None:
            cur.execute("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
                        "WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?", (w, d, o[0])).fetchall()
        cur.execute("COMMIT")

    def delivery(self):
        rnd, cur = self.rnd, self.db.cursor()
        w, carrier, now = rnd.uniform(1, self.warehouses), rnd.uniform(1, 10), int(time.time())
        cur.execute("BEGIN")
        for d in range(1, DISTRICTS + 1):
            row = cur.execute("SELECT min(no_o_id) FROM new_order WHERE no_w_id=? AND no_d_id=?", (w, d)).fetchone()
            if row[0] is None:
                continue
            o = row[0]
            cur.execute("DELETE FROM new_order WHERE no_w_id=? AND no_d_id=? AND no_o_id=?", (w, d, o))
            c = one(cur, "SELECT o_c_id FROM orders WHERE o_w_id=? AND o_d_id=? AND o_id=?", (w, d, o))[0]
            cur.execute("UPDATE orders SET o_carrier_id=? WHERE o_w_id=? AND o_d_id=? AND o_id=?", (carrier, w, d, o))
            cur.execute("UPDATE order_line SET ol_delivery_d=? WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?",
                        (now, w, d, o))
            total = one(cur, "SELECT sum(ol_amount) FROM order_line WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?",
                        (w, d, o))[0]
            cur.execute("UPDATE customer SET c_balance=c_balance+?, c_delivery_cnt=c_delivery_cnt+1 "
                        "WHERE c_w_id=? AND c_d_id=? AND c_id=?", (total, w, d, c))
        cur.execute("COMMIT")

    def stock_level(self):
        rnd, cur = self.rnd, self.db.cursor()
        w, d, threshold = rnd.uniform(1, self.warehouses), rnd.uniform(1, DISTRICTS), rnd.uniform(10, 20)
        cur.execute("BEGIN")
        next_o = one(cur, "SELECT d_next_o_id FROM district WHERE d_w_id=? AND d_id=?", (w, d))[0]
        one(cur, "SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id=ol_w_id AND s_i_id=ol_i_id "
            "WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id>=? AND ol_o_id<? AND s_quantity<?",
            (w, d, next_o - 20, next_o, threshold))
        cur.execute("COMMIT")

    def run(self, n):
        mix = [(45, self.new_order), (43, self.payment), (4, self.order_status), (4, self.delivery),
               (4, self.stock_level)]
        for _ in range(n):
            p = self.rnd.uniform(1, 100)
            for share, txn in mix:
                if p <= share:
                    txn()
                    break
                p -= share


def one(cur, sql, args):
    row = cur.execute(sql, args).fetchone()
    if row is None:
        raise Failure("no row: %s %s" % (sql, args))
    return row


def check(db):
    """TPC-C consistency conditions (clause 3.3.2) and SQLite's own check."""
    problems = []

    def expect_none(name, sql):
        rows = db.execute(sql).fetchall()
        if rows:
            problems.append("%s violated (%d cases, first %s)" % (name, len(rows), rows[0]))

    ok = db.execute("PRAGMA integrity_check").fetchall()
    if ok != [("ok",)]:
        problems.append("integrity_check: %s" % ok[:5])
    expect_none("condition 1 (W_YTD = sum(D_YTD))",
                "SELECT w_id FROM warehouse WHERE w_ytd != (SELECT sum(d_ytd) FROM district WHERE d_w_id=w_id)")
    expect_none("condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID))",
                "SELECT d_w_id, d_id FROM district WHERE d_next_o_id - 1 != "
                "(SELECT max(o_id) FROM orders WHERE o_w_id=d_w_id AND o_d_id=d_id) OR "
                "coalesce((SELECT max(no_o_id) FROM new_order WHERE no_w_id=d_w_id AND no_d_id=d_id), "
                "d_next_o_id - 1) != d_next_o_id - 1")
    expect_none("condition 3 (new orders contiguous)",
                "SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id "
                "HAVING max(no_o_id) - min(no_o_id) + 1 != count(*)")
    expect_none("condition 4 (sum(O_OL_CNT) = count(ORDER_LINE))",
                "SELECT d_w_id, d_id FROM district WHERE "
                "(SELECT sum(o_ol_cnt) FROM orders WHERE o_w_id=d_w_id AND o_d_id=d_id) != "
                "(SELECT count(*) FROM order_line WHERE ol_w_id=d_w_id AND ol_d_id=d_id)")
    expect_none("condition 5 (O_CARRIER_ID null <=> a NEW-ORDER row)",
                "SELECT o_w_id, o_d_id, o_id FROM orders WHERE (o_carrier_id IS NULL) != EXISTS "
                "(SELECT 1 FROM new_order WHERE no_w_id=o_w_id AND no_d_id=o_d_id AND no_o_id=o_id)")
    expect_none("condition 6 (lines per order = O_OL_CNT)",
                "SELECT o_w_id, o_d_id, o_id FROM orders WHERE o_ol_cnt != "
                "(SELECT count(*) FROM order_line WHERE ol_w_id=o_w_id AND ol_d_id=o_d_id AND ol_o_id=o_id)")
    expect_none("condition 7 (OL_DELIVERY_D null <=> O_CARRIER_ID null)",
                "SELECT ol_w_id, ol_d_id, ol_o_id, ol_number FROM order_line JOIN orders "
                "ON o_w_id=ol_w_id AND o_d_id=ol_d_id AND o_id=ol_o_id "
                "WHERE (ol_delivery_d IS NULL) != (o_carrier_id IS NULL)")
    expect_none("condition 8 (W_YTD = sum(H_AMOUNT))",
                "SELECT w_id FROM warehouse WHERE w_ytd != (SELECT sum(h_amount) FROM history WHERE h_w_id=w_id)")
    expect_none("condition 9 (D_YTD = sum(H_AMOUNT))",
                "SELECT d_w_id, d_id FROM district WHERE d_ytd != "
                "(SELECT sum(h_amount) FROM history WHERE h_w_id=d_w_id AND h_d_id=d_id)")
    return problems


def snapshot(db):
    """A few totals that must survive closing and reopening the database."""
    return db.execute("SELECT (SELECT sum(w_ytd) FROM warehouse), (SELECT sum(d_next_o_id) FROM district), "
                      "(SELECT count(*) FROM order_line), (SELECT count(*) FROM new_order), "
                      "(SELECT count(*) FROM history), (SELECT sum(s_ytd) FROM stock)").fetchone()


def connect(path, sync):
    db = sqlite3.connect(path, isolation_level=None)
    mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if mode.lower() != "wal":
        raise Failure("journal_mode is %s, not wal" % mode)
    db.execute("PRAGMA synchronous=%s" % sync)
    return db


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db")
    ap.add_argument("--sync", choices=["NORMAL", "FULL"], required=True)
    ap.add_argument("--warehouses", type=int, default=1)
    ap.add_argument("--customers", type=int, default=300)
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--transactions", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    if os.path.exists(a.db):
        raise Failure("%s exists" % a.db)
    rnd = Rand(a.seed, a.customers, a.items)
    db = connect(a.db, a.sync)
    db.executescript(SCHEMA)
    t0 = time.monotonic()
    load(db, rnd, a.warehouses, a.customers, a.items)
    load_s = time.monotonic() - t0

    term = Terminal(db, rnd, a.warehouses, a.customers, a.items)
    t0 = time.monotonic()
    term.run(a.transactions)
    run_s = time.monotonic() - t0

    problems = check(db)
    before = snapshot(db)
    db.close()
    db = connect(a.db, a.sync)
    after = snapshot(db)
    if after != before:
        problems.append("reopened database differs: %s, was %s" % (after, before))
    problems += check(db)
    db.close()
    if problems:
        raise Failure("; ".join(problems))
    name = a.sync.lower()
    for metric, value, unit, better in (("load_%s" % name, load_s, "s", "lower"),
                                        ("tpcc_%s" % name, a.transactions / run_s, "txn/s", "higher")):
        print(json.dumps({"metric": metric, "value": round(value, 4), "unit": unit, "better": better}))
    print("tpcc: %d transactions (%d rolled back) in %.2f s, load %.2f s" % (a.transactions, term.rollbacks, run_s,
                                                                          load_s), file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except (Failure, sqlite3.Error) as e:
        print("tpcc: %s" % e, file=sys.stderr)
        sys.exit(1)
