#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns a results folder (raw.jsonl, machine.json, stats/) into table.md
(medians per workload, metric and configuration, and each configuration's
ratio to the kernel's median) and one PNG per workload (the ratios, like the
paper's figures: below 1 is better for lower-is-better metrics). Where the
results carry a memcpy floor (fig3, fig4, table1, table6's data calls), a
second table per workload gives each configuration's overhead over that
floor, its ratio to the kernel's overhead and what bounds it (the rule:
bench/README.md, "Overhead and bounds"), and a third the faults, system
calls and flushes per op it is derived from. Every number in the tables is
recomputed from raw.jsonl and the stats files; run it again to check.

    report.py RESULTS_DIR
"""
import json
import os
import statistics
import sys
from collections import OrderedDict, defaultdict


def load(folder):
    rows, skipped, failed = [], [], []
    with open(os.path.join(folder, "raw.jsonl")) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if "skipped" in r:
                skipped.append(r)
            elif "failed" in r:
                failed.append(r)
            else:
                rows.append(r)
    return rows, skipped, failed


# What decides a row's bound (bench/README.md, "Overhead and bounds").
FLOOR_SHARE = 0.25  # overhead below this share of ns/op: bound by the floor
FAULTS_PER_OP = 0.1  # minor page faults per op from which faults bound it
SYSCALLS_PER_OP = 0.5  # system calls per op from which they bound it
DURABLE_PER_WRITE = 0.5  # log records or pmem fences per write: a flush each
WRITE_CALLS = ("write", "pwrite", "writev")
DATA_CALLS = WRITE_CALLS + ("read", "pread", "readv")
WHY_FIELDS = ("floor_ns", "faults", "fsyncs", "call")
SYNC_MODES = ("sync", "strict")  # their baseline is kernel-sync (the cells' `ks` ratio)
# Configurations that run a peer library instead of SplitFS (bench/run.sh).
PEERS = {"madfs": "MadFS (FAST'23), preloaded instead of SplitFS; its fsync makes no system call but flushes "
                  "CPU caches, which makes data durable only on DAX (not durable here when DAX is off)"}


def load_stats(path):
    """A library stats file (SPLITFS_STATS) as {"calls": {name: (count,
    passed to the kernel)}, "events": {name: n}}; None when there is none."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    calls, events = {}, {}
    for line in text.splitlines():
        w = line.split()
        if len(w) == 3 and w[0] == "event":
            events[w[1]] = int(w[2])
        elif len(w) == 6 and w[1].isdigit() and w[5].isdigit():
            calls[w[0]] = (int(w[1]), int(w[5]))
    return {"calls": calls, "events": events}


def passed(stats, call):
    """The share of call's operations the library passed to the kernel."""
    count, kernel = stats["calls"].get(call, (0, 0))
    return kernel / count if count else 0.0


def per_op(r, stats, dax=False):
    """What one run's result row says about its ops: (faults, system calls,
    flushes: True/False) per op, each None where unknown. r's fields come
    from the program (bench/src/lib/bench.h, struct bench_why). System
    calls are those of the op's own call (fsyncs count as flushes): one in
    a kernel run; in a library run the share of a data call its stats file
    says it passed to the kernel (for other calls the stats do not say
    whether the library made one itself); a peer's are not measured. A
    peer's fsync flushes CPU caches (no system call): a flush on DAX only
    (dax: the file system's, machine.json)."""
    faults = r.get("faults")
    fsyncs, call = r.get("fsyncs"), r.get("call")
    syscalls = flush = None
    if fsyncs:
        flush = True
    if r["config"] in PEERS:
        if not dax:
            flush = False
    elif r["config"] in ("kernel", "kernel-sync"):
        if call:
            syscalls = 1.0
        if flush is None and r["config"] == "kernel-sync" and call in WRITE_CALLS:
            flush = True  # mounted -o sync: every write durable when it returns
        if flush is None and fsyncs is not None:
            flush = False
    elif stats is not None:
        if call in DATA_CALLS:
            syscalls = passed(stats, call)
        if flush is None and call:
            writes = sum(stats["calls"].get(c, (0, 0))[0] for c in WRITE_CALLS)
            durable = stats["events"].get("log_records", 0) + stats["events"].get("dax_fences", 0)
            flush = call in WRITE_CALLS and writes > 0 and durable / writes >= DURABLE_PER_WRITE
    return faults, syscalls, flush


def legacy_floor(rows):
    """Results from before the programs carried their floor: table1's
    latencies take the cold memcpy of the same run (overhead.c's floor) and
    their calls (no fsync); their faults stay unknown."""
    cold = {(r["config"], r["rep"]): r["value"] for r in rows
            if r["workload"] == "table1" and r["metric"] == "memcpy_cold_ns"}
    for r in rows:
        key = (r.get("config"), r.get("rep"))
        if (r["workload"] == "table1" and r["metric"] in ("append_4k_ns", "read_4k_ns", "overwrite_4k_ns")
                and "floor_ns" not in r and key in cold):
            r["floor_ns"] = cold[key]
            r["floor_of"] = "memcpy_cold_ns: 4 KiB from random blocks of a cold buffer"
            r["fsyncs"] = 0
            r["call"] = {"append_4k_ns": "write", "read_4k_ns": "pread"}.get(r["metric"], "pwrite")


def bound(ns, floor, faults, syscalls, flush):
    """The word for what bounds an op (bench/README.md): floor, flush,
    fault, syscall, else code (the configuration's own instructions); '?'
    after it when an input of a rule before it is unknown; '-' without a
    floor."""
    if floor is None or ns is None:
        return "—"
    if ns - floor < FLOOR_SHARE * ns:
        return "floor"
    unsure = ""
    for word, v, hit in (("flush", flush, lambda v: v), ("fault", faults, lambda v: v >= FAULTS_PER_OP),
                         ("syscall", syscalls, lambda v: v >= SYSCALLS_PER_OP)):
        if v is None:
            unsure = "?"
        elif hit(v):
            return word + unsure
    return "code" + unsure


def order_configs(configs):
    first = ["kernel", "posix", "sync", "strict", "kernel-sync"]
    return ([c for c in first if c in configs] + sorted(c for c in configs if c not in first and c not in PEERS)
            + sorted(c for c in configs if c in PEERS))


def summarize(rows, folder, dax=False):
    """{workload: {metric: {"unit", "better", "values": {config: [values]},
    and where the rows carry them "floor": [all runs' floors], "floor_of",
    "ops": {config: [(faults, syscalls, flush) per run]}}}} in first-seen
    order. dax: whether the file system had DAX on (per_op)."""
    legacy_floor(rows)
    out = OrderedDict()
    stats = {}
    for r in rows:
        m = out.setdefault(r["workload"], OrderedDict()).setdefault(
            r["metric"], {"unit": r.get("unit", ""), "better": r.get("better", "lower"), "values": defaultdict(list)})
        m["values"][r["config"]].append(float(r["value"]))
        if not any(k in r for k in WHY_FIELDS):
            continue
        if "floor_ns" in r:
            m.setdefault("floor", []).append(float(r["floor_ns"]))
            m["floor_of"] = r.get("floor_of", "")
        key = (r["workload"], r["config"], r.get("rep"))
        if key not in stats:
            stats[key] = load_stats(os.path.join(folder, "stats", "%s.%s.%s.txt" % key))
        m.setdefault("ops", defaultdict(list))[r["config"]].append(per_op(r, stats[key], dax))
    return out


def med(values):
    """The median of the known values (None where none is known); for
    True/False, whether at least half are True."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    if isinstance(v[0], bool):
        return sum(v) * 2 >= len(v)
    return statistics.median(v)


def overhead_tables(metrics, configs):
    """The overhead and per-op tables of one workload (markdown lines), or
    none when no metric carries a floor."""
    rows = [(k, m) for k, m in metrics.items() if "ops" in m]
    if not any("floor" in m for _, m in rows):
        return []
    lines = ["Overhead over the floor: ns/op − floor (ratio to the kernel's overhead) and what bounds it.", "",
             "| metric | floor | " + " | ".join(configs) + " |", "|---|---|" + "---|" * len(configs)]
    counts = ["Per op: minor page faults / system calls of the op's call, `/ flush` where data is made durable.", "",
              "| metric | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]
    floors_of = OrderedDict()
    for metric, m in rows:
        floor = med(m.get("floor", []))
        if floor is not None:
            floors_of.setdefault(m.get("floor_of") or "?", []).append(metric)
        ovh = {}
        cells, ccells = [], []
        for c in configs:
            v = m["values"].get(c)
            ns = statistics.median(v) if v else None
            ops = m["ops"].get(c, [])
            faults, syscalls, flush = (med([o[i] for o in ops]) for i in range(3))
            if ns is not None and floor is not None:
                ovh[c] = ns - floor
            if c not in ovh:
                cells.append("—")
            else:
                base = ovh.get("kernel")
                ratio = " (%.2fx)" % (ovh[c] / base) if c != "kernel" and base and base > 0 < ovh[c] else ""
                cells.append("%s%s %s" % (fmt(ovh[c]), ratio, bound(ns, floor, faults, syscalls, flush)))
            if not ops:
                ccells.append("-")
                continue
            q = lambda x, f: "?" if x is None else f % x
            ccells.append("%s / %s%s" % (q(faults, "%.2f"), q(syscalls, "%.2f"),
                                        " / flush" if flush else (" / ?" if flush is None else "")))
        lines.append("| %s | %s | %s |" % (metric, "—" if floor is None else fmt(floor), " | ".join(cells)))
        counts.append("| %s | %s |" % (metric, " | ".join(ccells)))
    lines.append("")
    lines.append("Floor: " + "; ".join("%s (%s)" % (f, ", ".join(ms)) for f, ms in floors_of.items()) + "."
                 + (" `—`: no floor applies (the call copies no data)." if any("floor" not in m for _, m in rows)
                    else ""))
    return lines + [""] + counts + [""]


def fmt(v):
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 1:
        return "%.2f" % v
    return "%.3g" % v


def table(summary, machine, skipped, failed):
    lines = ["# SplitFS benchmark results", ""]
    lines.append("Machine: %s, %s CPUs, %s GiB, kernel %s; file system %s on %s (backing %s), DAX %s; load at start %s; build %s; %s."
                 % (machine.get("cpu"), machine.get("cpus"), machine.get("mem_gib"), machine.get("kernel"),
                    machine.get("fs"), machine.get("device"), machine.get("backing") or "-",
                    "on" if machine.get("dax") else "off", machine.get("loadavg"), machine.get("splitfs"),
                    machine.get("date")))
    if machine.get("page_reporting") is not None:
        lines.append("")
        lines.append("Free page reporting is on (a virtio balloon; blocks of order %s and up): the host takes back "
                     "the guest's free 2 MiB blocks, and the first store to one costs a fault in the host (a fresh "
                     "4 GiB buffer here: 9.1 s to fill the first time, 0.41 s the second). A run whose data lands "
                     "in such blocks (2 MiB page-cache folios, large buffers) can take several times its usual "
                     "time; compare its repetitions." % machine.get("page_reporting"))
    prim = machine.get("primitives")
    if prim:
        lines.append("")
        lines.append("Primitives there (bench/src/primitives.c, ns): system call %s; 4 KiB: memcpy %s, CRC32C %s, "
                     "libpmem2 copy + fence %s, pwrite %s, pread %s; first store to a page of a file mapping %s "
                     "(%s faults per 2 MiB; %s and %s with 2 MiB-aligned extents)."
                     % (prim["syscall_ns"], prim["memcpy_4k_ns"], prim["crc32c_4k_ns"], prim["pmem_copy_4k_ns"],
                        prim["pwrite_4k_ns"], prim["pread_4k_ns"], prim["first_store_ns"], prim["faults_per_2m"],
                        prim["aligned_first_store_ns"], prim["aligned_faults_per_2m"]))
    lines.append("")
    lines.append("Each cell: median over the repetitions (n in parentheses when not all ran), then the ratio to "
                 "the kernel's median. For 'lower' metrics a ratio below 1 means SplitFS is faster; for 'higher' "
                 "metrics, above 1. Where `kernel-sync` ran (the kernel file system mounted `-o sync`: every write "
                 "and metadata call synchronous, the kernel's own sync mode), the sync and strict cells add their "
                 "ratio to its median (`ks`): the kernel that keeps their promise.")
    if any("floor" in m for metrics in summary.values() for m in metrics.values()):
        lines.append("")
        lines.append("Where a workload's ops copy data, a second table gives each configuration's overhead: its "
                     "median ns/op minus the memcpy floor of the same ops (the median over all runs; '—' where no "
                     "floor applies), with its ratio to the kernel's overhead, and a word for what bounds it: "
                     "`floor` (overhead under %d%% of ns/op), else `flush` (data made durable each op or by the "
                     "pattern's fsyncs), `fault` (%.2g+ minor page faults per op), `syscall` (%.2g+ system calls "
                     "per op in its call), or `code` (none of these: the configuration's own instructions); `?` after it: "
                     "an input to a rule before it was not measured. A third table gives those inputs "
                     "(bench/README.md, \"Overhead and bounds\")." % (FLOOR_SHARE * 100, FAULTS_PER_OP,
                                                                      SYSCALLS_PER_OP))
    lines.append("")
    for workload, metrics in summary.items():
        configs = order_configs({c for m in metrics.values() for c in m["values"]})
        lines.append("## %s" % workload)
        lines.append("")
        lines.append("| metric | unit | better | " + " | ".join(configs) + " |")
        lines.append("|---|---|---|" + "---|" * len(configs))
        for metric, m in metrics.items():
            vals = m["values"]
            base = statistics.median(vals["kernel"]) if vals.get("kernel") else None
            sync_base = statistics.median(vals["kernel-sync"]) if vals.get("kernel-sync") else None
            cells = []
            nmax = max(len(v) for v in vals.values())
            for c in configs:
                v = vals.get(c)
                if not v:
                    cells.append("-")
                    continue
                med = statistics.median(v)
                cell = fmt(med) + ("" if len(v) == nmax else " (n=%d)" % len(v))
                if c != "kernel" and base:
                    cell += " (%.2fx)" % (med / base)
                if c in SYNC_MODES and sync_base:
                    cell += " (ks %.2fx)" % (med / sync_base)
                cells.append(cell)
            lines.append("| %s | %s | %s | %s |" % (metric, m["unit"], m["better"], " | ".join(cells)))
        lines.append("")
        lines += overhead_tables(metrics, configs)
    peers = sorted({c for metrics in summary.values() for m in metrics.values() for c in m["values"]} & set(PEERS))
    if peers:
        lines.append("Peers: " + "; ".join("`%s`: %s" % (c, PEERS[c]) for c in peers) + ".")
        lines.append("")
    if skipped:
        lines.append("Skipped: " + "; ".join(sorted({"%s/%s: %s" % (s["workload"], s["config"], s["skipped"]) for s in skipped})) + ".")
        lines.append("")
    if failed:
        lines.append("Failed runs: " + ", ".join("%s/%s rep %s (exit %s)" % (f["workload"], f["config"], f.get("rep"), f["failed"]) for f in failed) + ".")
        lines.append("")
    return "\n".join(lines)


def plots(summary, folder):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib missing, no plots (bench/deps.sh installs it)", file=sys.stderr)
        return
    for workload, metrics in summary.items():
        configs = [c for c in order_configs({c for m in metrics.values() for c in m["values"]}) if c != "kernel"]
        names = [k for k, m in metrics.items() if m["values"].get("kernel")]
        if not configs or not names:
            continue
        fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(names) + 2), 4))
        width = 0.8 / len(configs)
        for i, c in enumerate(configs):
            ratios = []
            for name in names:
                m = metrics[name]["values"]
                ratios.append(statistics.median(m[c]) / statistics.median(m["kernel"]) if m.get(c) else 0)
            ax.bar([x + i * width for x in range(len(names))], ratios, width, label=c)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks([x + width * (len(configs) - 1) / 2 for x in range(len(names))])
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("configuration / kernel (median)")
        ax.set_title(workload)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(folder, workload + ".png"), dpi=110)
        plt.close(fig)


def main():
    folder = sys.argv[1]
    rows, skipped, failed = load(folder)
    with open(os.path.join(folder, "machine.json")) as f:
        machine = json.load(f)
    summary = summarize(rows, folder, bool(machine.get("dax")))
    with open(os.path.join(folder, "table.md"), "w") as f:
        f.write(table(summary, machine, skipped, failed) + "\n")
    plots(summary, folder)


if __name__ == "__main__":
    main()
