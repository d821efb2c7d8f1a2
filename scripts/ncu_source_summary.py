#!/usr/bin/env python3
"""Summaries of Nsight Compute's per-instruction counts (the SASS source page exported as CSV by
scripts/perf_profile.sh: `ncu -i REPORT --page source --csv --print-source sass`).

Used to decide where a kernel's instructions go before changing it:
  opcodes  warp instructions and stall samples per opcode, per profiled kernel
  blocks   runs of instructions with equal execution counts (basic blocks, in practice) that
           hold at least THRESHOLD of a kernel's instructions, with their opcode mix
  stalls   the kernel's stall reasons (sampled), largest first

usage: scripts/ncu_source_summary.py {opcodes,blocks,stalls} SOURCE_CSV [--kernel N]
                                     [--threshold 0.008]
"""
import argparse
import collections
import csv
import sys

# Columns of the source page (ncu 2025/2026): address, source, then counters by name.
SOURCE, SAMPLES, EXECUTED = "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed"


def read_kernels(path):
    """The profiled kernels in file order: (name, header index, instruction rows)."""
    kernels, header = [], None
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                kernels.append({"name": row[1], "rows": []})
            elif row[0] == "Address":
                header = {name: i for i, name in enumerate(row)}
            elif kernels and header is not None:
                kernels[-1]["rows"].append(row)
    if header is None:
        sys.exit(f"{path}: no source page header (expected a row starting with 'Address')")
    return kernels, header


def count(row, header, column):
    value = row[header[column]] if header[column] < len(row) else ""
    return int(value) if value.strip().isdigit() else 0


def opcode(row, header):
    """The instruction's opcode without predicate or modifiers: '@!P0 LDS.128 R4, [R2]' -> LDS."""
    words = row[header[SOURCE]].split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def print_opcodes(kernel, header, _):
    ops, stalls = collections.Counter(), collections.Counter()
    for row in kernel["rows"]:
        ops[opcode(row, header)] += count(row, header, EXECUTED)
        stalls[opcode(row, header)] += count(row, header, SAMPLES)
    total, samples = sum(ops.values()), max(sum(stalls.values()), 1)
    print(f" total warp instructions {total / 1e6:.1f} M, stall samples {samples}")
    for op, n in ops.most_common(20):
        print(f"  {op:<8} {n / 1e6:6.2f} M {100 * n / total:5.1f}%  "
              f"stall samples {100 * stalls[op] / samples:5.1f}%")


def print_blocks(kernel, header, threshold):
    rows = kernel["rows"]
    executed = [count(r, header, EXECUTED) for r in rows]
    total = max(sum(executed), 1)
    start = 0
    for end in range(1, len(rows) + 1):
        if end < len(rows) and executed[end] == executed[start]:
            continue
        share = executed[start] * (end - start) / total
        if share >= threshold:
            mix = collections.Counter(opcode(rows[i], header) for i in range(start, end))
            samples = sum(count(rows[i], header, SAMPLES) for i in range(start, end))
            print(f"  {start:5d}-{end:5d} len {end - start:4d} exec {executed[start]:8d}  "
                  f"share {100 * share:5.1f}% samples {samples:5d}  "
                  + " ".join(f"{op}:{n}" for op, n in mix.most_common(8)))
        start = end


def print_stalls(kernel, header, _):
    reasons = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    totals = collections.Counter()
    for row in kernel["rows"]:
        for reason in reasons:
            totals[reason] += count(row, header, reason)
    samples = max(sum(totals.values()), 1)
    print("  " + ", ".join(f"{r[len('stall_'):]} {100 * n / samples:.1f}%"
                           for r, n in totals.most_common(10)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["opcodes", "blocks", "stalls"])
    parser.add_argument("csv")
    parser.add_argument("--kernel", type=int, default=None,
                        help="index of the profiled kernel (default: every one)")
    parser.add_argument("--threshold", type=float, default=0.008,
                        help="blocks: smallest share of the kernel's instructions shown")
    args = parser.parse_args()
    kernels, header = read_kernels(args.csv)
    show = {"opcodes": print_opcodes, "blocks": print_blocks, "stalls": print_stalls}[args.what]
    for i, kernel in enumerate(kernels):
        if args.kernel is not None and i != args.kernel:
            continue
        print(f"[{i}] {kernel['name'][:150]}")
        show(kernel, header, args.threshold)


if __name__ == "__main__":
    main()
