#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns a results folder (raw.jsonl, machine.json) into table.md (medians
per workload, metric and configuration, and each configuration's ratio to
the kernel's median) and one PNG per workload (the ratios, like the paper's
figures: below 1 is better for lower-is-better metrics). Every number in
the table is recomputed from raw.jsonl; run it again to check.

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


def order_configs(configs):
    first = ["kernel", "posix", "sync", "strict"]
    return [c for c in first if c in configs] + sorted(c for c in configs if c not in first)


def summarize(rows):
    """{workload: {metric: {"unit", "better", config: [values]}}} in first-seen order."""
    out = OrderedDict()
    for r in rows:
        m = out.setdefault(r["workload"], OrderedDict()).setdefault(
            r["metric"], {"unit": r.get("unit", ""), "better": r.get("better", "lower"), "values": defaultdict(list)})
        m["values"][r["config"]].append(float(r["value"]))
    return out


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
                 "metrics, above 1.")
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
                cells.append(cell)
            lines.append("| %s | %s | %s | %s |" % (metric, m["unit"], m["better"], " | ".join(cells)))
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
        ax.set_ylabel("SplitFS / kernel (median)")
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
    summary = summarize(rows)
    with open(os.path.join(folder, "table.md"), "w") as f:
        f.write(table(summary, machine, skipped, failed) + "\n")
    plots(summary, folder)


if __name__ == "__main__":
    main()
