#!/usr/bin/env python3
"""Figures of the register-blocking study from a sweep CSV (`ndconv sweep --csv`), so that anyone
can regenerate them from their own run. A sweep point is keyed on the kernel that ran (columns
kernel, tx, ko, block); each kernel family and shape is one series over KO:

  <prefix>gflops_vs_ko.png     GFLOP/s against KO, one panel per volume, one colour per filter size,
                               one line style per kernel family and shape (blocked solid, tiled
                               dashed, other tiled shapes dotted); the automatic plan as a star at
                               its KO; the FMA peak measured in the same run (dashed black)
  <prefix>speedup_vs_ko.png    speedup over the same series' KO=1 against KO, measured, and the
                               seed method's factor of fewer loads k*KO/(k+KO-1) (thin grey)
  <prefix>resources_vs_ko.png  registers per thread and theoretical occupancy (with the launch's
                               shared memory) against KO, one line per kernel family and shape and
                               dimension (median over the problems; spills annotated)

usage: scripts/plot_study.py docs/study/sweep-h100.csv --out docs/study/ [--prefix h100-]
Needs matplotlib only.
"""
import argparse
import collections
import csv
import math
import os
import statistics
import sys

REQUIRED = ("dims", "volume", "filter", "point", "kernel", "tx", "ko", "block", "status", "gflops",
            "registers", "occupancy", "speedup_vs_ko1")


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
    for col in REQUIRED:
        if col not in rows[0]:
            sys.exit(f"plot_study.py: {path} has no column '{col}' (an ndconv sweep CSV with the "
                     "kernel columns is needed; older sweeps keyed points on KO only)")
    return [r for r in rows if r["status"] == "valid"]


def series_name(r):
    """A kernel family and shape: 'blocked', 'tiled TX=8 4x32x1'."""
    if r["kernel"] == "tiled":
        return f"tiled TX={r['tx']} {r['block']}"
    return r["kernel"]


def style_of(name, order):
    """Solid for the blocked kernel, dashed for the first tiled shape, then dotted, dash-dot."""
    if not name.startswith("tiled"):
        return "-"
    tiled = [n for n in order if n.startswith("tiled")]
    return ["--", ":", "-.", (0, (5, 1, 1, 1))][min(tiled.index(name), 3)]


def by_volume(rows):
    groups = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: (int(r["dims"]), r["volume"])):
        groups.setdefault((int(r["dims"]), r["volume"]), []).append(r)
    return groups


def k_of(r):
    return int(r["filter"].split("x")[0])


def curves(rows, key):
    """{(series, k): [(KO, value)]} of the forced points, sorted by KO."""
    out = collections.defaultdict(list)
    for r in rows:
        v = number(r.get(key))
        if r["point"] == "forced" and v is not None:
            out[(series_name(r), k_of(r))].append((int(r["ko"]), v))
    return {key: sorted(v) for key, v in out.items()}


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
    from matplotlib.lines import Line2D

    rows = load(args.csv)
    if not rows:
        sys.exit("plot_study.py: no valid rows")
    groups = by_volume(rows)
    order = list(collections.OrderedDict.fromkeys(series_name(r) for r in rows))
    ks = sorted({k_of(r) for r in rows})
    color = {k: f"C{i % 10}" for i, k in enumerate(ks)}
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
        fig, axes = plt.subplots(nrows, cols, figsize=(5.6 * cols, 4.1 * nrows), squeeze=False)
        flat = [ax for row in axes for ax in row]
        for ax in flat[n:]:
            ax.set_visible(False)
        return fig, flat

    def legend(ax, rs, with_auto):
        names = [s for s in order if any(series_name(r) == s for r in rs if r["point"] == "forced")]
        handles = [Line2D([], [], color=color[k], marker="o", label=f"k={k}")
                   for k in sorted({k_of(r) for r in rs})]
        handles += [Line2D([], [], color="k", linestyle=style_of(s, order), label=s) for s in names]
        if with_auto:
            handles.append(Line2D([], [], color="k", marker="*", markersize=10, linestyle="",
                                  label="automatic plan"))
        ax.legend(handles=handles, fontsize=6.5, ncol=2)

    # GFLOP/s against KO, with the measured peak and the automatic plan.
    fig, axes = panels()
    for ax, ((dims, vol), rs) in zip(axes, groups.items()):
        for (s, k), pts in curves(rs, "gflops").items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                    color=color[k], linestyle=style_of(s, order))
        for r in rs:
            if r["point"] == "auto" and number(r["gflops"]) is not None:
                ax.plot(int(r["ko"]), number(r["gflops"]), marker="*", markersize=11,
                        color=color[k_of(r)], markeredgecolor="k", linestyle="")
        peaks = [number(r["gflops"]) * 100 / number(r["pct_fma_peak"]) for r in rs
                 if number(r.get("pct_fma_peak")) and number(r.get("gflops"))]
        if peaks:
            peak = statistics.median(peaks)
            ax.axhline(peak, color="k", linestyle="--", linewidth=1)
            ax.text(1, peak, " measured FMA peak", va="bottom", fontsize=8)
        ko_axis(ax, rs)
        ax.set_xlabel("KO (outputs per thread along the last axis)")
        ax.set_ylabel("GFLOP/s (2 flops per tap)")
        ax.set_title(f"{dims}D {vol}", fontsize=10)
        ax.grid(True, alpha=0.3)
        legend(ax, rs, True)
    fig.suptitle(f"Register blocking: throughput against KO per kernel ({device})", fontsize=11)
    save(fig, "gflops_vs_ko.png")

    # Speedup over the series' own KO=1: measured vs the seed method's load factor.
    fig, axes = panels()
    for ax, ((dims, vol), rs) in zip(axes, groups.items()):
        theory_kos = sorted({int(r["ko"]) for r in rs})
        for k in sorted({k_of(r) for r in rs}):
            ax.plot(theory_kos, [k * ko / (k + ko - 1) for ko in theory_kos], color=color[k],
                    linewidth=0.8, alpha=0.45)
        for (s, k), pts in curves(rs, "speedup_vs_ko1").items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                    color=color[k], linestyle=style_of(s, order))
        ko_axis(ax, rs)
        ax.set_xlabel("KO")
        ax.set_ylabel("time(KO=1) / time(KO), same kernel")
        ax.set_title(f"{dims}D {vol} (thin: k*KO/(k+KO-1))", fontsize=9)
        ax.grid(True, alpha=0.3)
        legend(ax, rs, False)
    save(fig, "speedup_vs_ko.png")

    # Registers and occupancy against KO per kernel family and shape (median over the problems:
    # a blocked KO's registers differ between its constant and global tap flavours, and the tiled
    # kernel's occupancy counts the launch's shared memory, which grows with the filter).
    fig, (ax_r, ax_o) = plt.subplots(1, 2, figsize=(10, 3.9))
    per = collections.OrderedDict()
    for r in rows:
        if r["point"] == "forced":
            per.setdefault((series_name(r), int(r["dims"])), collections.defaultdict(list))[
                int(r["ko"])].append(r)
    for i, ((s, dims), by_ko) in enumerate(per.items()):
        kos = sorted(by_ko)
        regs = [statistics.median(number(r["registers"]) for r in by_ko[k]) for k in kos]
        occ = [statistics.median(number(r["occupancy"]) for r in by_ko[k]) for k in kos]
        spill = [max(number(r.get("spill_bytes")) or 0 for r in by_ko[k]) for k in kos]
        kw = dict(marker="o", markersize=3, linestyle=style_of(s, order), color=f"C{dims}",
                  label=f"{s}, {dims}D")
        ax_r.plot(kos, regs, **kw)
        for k, reg, sp in zip(kos, regs, spill):
            if sp:
                ax_r.annotate(f"spills {int(sp)} B", (k, reg), fontsize=7)
        ax_o.plot(kos, occ, **kw)
    for ax, label in ((ax_r, "registers per thread"), (ax_o, "theoretical occupancy")):
        ko_axis(ax, rows)
        ax.set_xlabel("KO")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6.5)
    ax_o.set_ylim(0, 1.05)
    fig.suptitle(f"Resources of the kernels that ran ({device})", fontsize=11)
    save(fig, "resources_vs_ko.png")
    for p in written:
        print("wrote", p)


if __name__ == "__main__":
    main()
