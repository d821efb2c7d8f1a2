#!/usr/bin/env python3
"""Figures of the register-blocking study from a sweep CSV (`ndconv sweep --csv`), so that anyone
can regenerate them from their own run:

  <prefix>gflops_vs_ko.png     GFLOP/s against KO, one line per filter size, one panel per volume,
                               with the FMA peak measured in the same run (dashed)
  <prefix>speedup_vs_ko.png    speedup over KO=1 against KO, measured (solid) and the seed
                               method's factor of fewer loads k*KO/(k+KO-1) (dotted)
  <prefix>resources_vs_ko.png  registers per thread and theoretical occupancy against KO

usage: scripts/plot_study.py docs/study/sweep-h100.csv --out docs/study/ [--prefix h100-]
Needs matplotlib only.
"""
import argparse
import collections
import csv
import math
import os
import sys


def number(text):
    try:
        v = float(text)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_study.py: {path} has no rows")
    for col in ("dims", "volume", "filter", "ko", "gflops", "registers", "occupancy", "valid"):
        if col not in rows[0]:
            sys.exit(f"plot_study.py: {path} has no column '{col}' (is it an ndconv sweep CSV?)")
    return [r for r in rows if r["valid"] == "true"]


def by_volume(rows):
    groups = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: (int(r["dims"]), r["volume"])):
        groups.setdefault((int(r["dims"]), r["volume"]), []).append(r)
    return groups


def series(rows, key):
    """{filter extent k: [(KO, value)]} sorted by KO."""
    out = collections.defaultdict(list)
    for r in rows:
        v = number(r.get(key))
        if v is not None:
            out[int(r["filter"].split("x")[0])].append((int(r["ko"]), v))
    return {k: sorted(v) for k, v in sorted(out.items())}


def ko_axis(ax, rows):
    """log2 KO axis labelled with the KO values themselves."""
    from matplotlib.ticker import FixedLocator, NullLocator

    kos = sorted({int(r["ko"]) for r in rows})
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(kos))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(k) for k in kos])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", default=".", help="folder for the PNG files")
    ap.add_argument("--prefix", default="")
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = load(args.csv)
    if not rows:
        sys.exit("plot_study.py: no valid rows")
    groups = by_volume(rows)
    os.makedirs(args.out, exist_ok=True)
    device = rows[0].get("device", "")
    n = len(groups)
    written = []

    def save(fig, name):
        path = os.path.join(args.out, args.prefix + name)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    cols = min(n, 2)
    nrows = (n + cols - 1) // cols

    def panels():
        fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.9 * nrows), squeeze=False)
        flat = [ax for row in axes for ax in row]
        for ax in flat[n:]:
            ax.set_visible(False)
        return fig, flat

    # GFLOP/s against KO, with the measured peak.
    fig, axes = panels()
    for ax, ((dims, vol), rs) in zip(axes, groups.items()):
        for k, pts in series(rs, "gflops").items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"k={k}")
        peaks = [number(r["gflops"]) * 100 / number(r["pct_fma_peak"]) for r in rs
                 if number(r.get("pct_fma_peak")) and number(r.get("gflops"))]
        if peaks:
            peak = sorted(peaks)[len(peaks) // 2]
            ax.axhline(peak, color="k", linestyle="--", linewidth=1)
            ax.text(1, peak, " measured FMA peak", va="bottom", fontsize=8)
        ko_axis(ax, rs)
        ax.set_xlabel("KO (outputs per thread)")
        ax.set_ylabel("GFLOP/s (2 flops per tap)")
        ax.set_title(f"{dims}D {vol}", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(f"Register blocking: throughput against KO ({device})", fontsize=11)
    save(fig, "gflops_vs_ko.png")

    # Speedup over KO=1: measured vs the seed method's load factor.
    fig, axes = panels()
    for ax, ((dims, vol), rs) in zip(axes, groups.items()):
        for i, (k, pts) in enumerate(series(rs, "speedup_vs_ko1").items()):
            color = f"C{i % 10}"
            kos = [p[0] for p in pts]
            ax.plot(kos, [p[1] for p in pts], marker="o", color=color, label=f"k={k}")
            ax.plot(kos, [k * ko / (k + ko - 1) for ko in kos], linestyle=":", color=color)
        ko_axis(ax, rs)
        ax.set_xlabel("KO")
        ax.set_ylabel("time(KO=1) / time(KO)")
        ax.set_title(f"{dims}D {vol} (dotted: k*KO/(k+KO-1))", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    save(fig, "speedup_vs_ko.png")

    # Registers and occupancy against KO (properties of the instantiation, per dimension; the
    # same kernels serve 2D, 3D and 4D, so the lines may coincide).
    fig, (ax_r, ax_o) = plt.subplots(1, 2, figsize=(9, 3.6))
    per_dims = collections.OrderedDict()
    for r in rows:
        per_dims.setdefault(int(r["dims"]), {})[int(r["ko"])] = r
    for dims, by_ko in per_dims.items():
        kos = sorted(by_ko)
        regs = [number(by_ko[k]["registers"]) for k in kos]
        occ = [number(by_ko[k]["occupancy"]) for k in kos]
        spill = [number(by_ko[k].get("spill_bytes")) or 0 for k in kos]
        ax_r.plot(kos, regs, marker="o", label=f"{dims}D")
        for k, reg, s in zip(kos, regs, spill):
            if s and reg is not None:
                ax_r.annotate(f"spills {int(s)} B", (k, reg), fontsize=7)
        ax_o.plot(kos, occ, marker="o", label=f"{dims}D")
    for ax, label in ((ax_r, "registers per thread"), (ax_o, "theoretical occupancy")):
        ko_axis(ax, rows)
        ax.set_xlabel("KO")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    ax_o.set_ylim(0, 1.05)
    fig.suptitle(f"Resources of the instantiations ({device})", fontsize=11)
    save(fig, "resources_vs_ko.png")
    for p in written:
        print("wrote", p)


if __name__ == "__main__":
    main()
