#!/usr/bin/env python3
"""Figures of the register-blocking study from a sweep CSV (`ndconv sweep --csv`), GPU or CPU, so
that anyone can regenerate them from their own run. A sweep point is keyed on the kernel that ran
(columns kernel, tx, ko, block); each kernel family and shape is one series over KO (on the CPU:
the backend's blocking factor B).

  <prefix>gflops_vs_ko.png     GFLOP/s against KO: one row of panels per volume, one column per
                               kernel family and shape, one colour per filter size; the automatic
                               plan as a star on the series of the kernel it ran; the FMA peak
                               measured in the same run (GPU sweeps)
  <prefix>speedup_vs_ko.png    speedup over the same series' KO=1 against KO (solid), and the seed
                               method's factor of fewer loads k*KO/(k+KO-1) (dotted), same layout;
                               series swept at one KO only are left out
  <prefix>resources_vs_ko.png  registers per thread and theoretical occupancy (with the launch's
                               shared memory) against KO per kernel family and shape: median over
                               the problems, bars from the least to the most; spills annotated
                               (GPU sweeps only: a CPU sweep has no such columns)

Panels of one row share their y axis, so the families of a volume compare at a glance.

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

REQUIRED = ("dims", "volume", "filter", "point", "kernel", "ko", "status", "gflops")
MARKERS = "osD^vP"


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
                     "kernel columns is needed)")
    valid = [r for r in rows if r["status"] == "valid"]
    if not valid:
        sys.exit(f"plot_study.py: {path} has no valid points")
    return valid


def series_name(r):
    """A kernel family and shape: 'blocked', 'tiled TX=8 4x32x1', 'cpu'."""
    if r["kernel"] == "tiled":
        return f"tiled TX={r.get('tx', '')} {r.get('block', '')}".strip()
    return r["kernel"]


def k_of(r):
    return int(r["filter"].split("x")[0])


def ko_of(r):
    return int(r["ko"])


class Layout:
    """Which volumes (rows) and series (columns) the sweep holds, and the colour of each filter."""

    def __init__(self, rows):
        self.cpu = all(r.get("mode", "") == "cpu" or r["kernel"] == "cpu" for r in rows)
        self.device = rows[0].get("device", "")
        self.volumes = list(collections.OrderedDict.fromkeys(
            (int(r["dims"]), r["volume"])
            for r in sorted(rows, key=lambda r: (int(r["dims"]), r["volume"]))))
        # Series in the order they first appear, forced ones first, so that a series that only the
        # automatic plan ran (e.g. a 2D shape the default sweep does not force) comes last.
        forced = [series_name(r) for r in rows if r["point"] == "forced"]
        auto = [series_name(r) for r in rows if r["point"] == "auto"]
        self.series = list(collections.OrderedDict.fromkeys(forced + auto))
        self.ks = sorted({k_of(r) for r in rows})
        self.color = {k: f"C{i % 10}" for i, k in enumerate(self.ks)}
        self.cells = collections.defaultdict(list)
        for r in rows:
            self.cells[((int(r["dims"]), r["volume"]), series_name(r))].append(r)

    @property
    def ko(self):
        return "B" if self.cpu else "KO"

    @property
    def ko_name(self):
        return "B (CPU blocking factor)" if self.cpu else "KO (outputs per thread, last axis)"


def forced_curves(rows, key):
    """{k: [(KO, value)]} of the forced points of one panel, sorted by KO."""
    out = collections.defaultdict(list)
    for r in rows:
        v = number(r.get(key))
        if r["point"] == "forced" and v is not None:
            out[k_of(r)].append((ko_of(r), v))
    return {k: sorted(v) for k, v in sorted(out.items())}


def ko_axis(ax, kos):
    """log2 KO axis labelled with the KO values themselves, a little room on both sides."""
    from matplotlib.ticker import FixedLocator, NullLocator

    kos = sorted(set(kos))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(kos))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(k) for k in kos])
    ax.set_xlim(min(kos) / 1.4, max(kos) * 1.4)


def grid(plt, layout, columns):
    """One row per volume, one column per series; panels without points are hidden."""
    nrows, ncols = len(layout.volumes), len(columns)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols + 1.6, 2.9 * nrows + 0.9),
                             squeeze=False, sharey="row")
    panels = []
    for i, vol in enumerate(layout.volumes):
        for j, s in enumerate(columns):
            ax = axes[i][j]
            rs = layout.cells.get((vol, s), [])
            if not rs:
                ax.set_visible(False)
                continue
            ax.set_title(f"{vol[0]}D {vol[1]}: {s}", fontsize=8.5)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=7.5, labelleft=True)
            if i == nrows - 1 or not layout.cells.get((layout.volumes[i + 1], s)):
                ax.set_xlabel(layout.ko_name, fontsize=8)
            panels.append((ax, vol, s, rs))
    return fig, panels


def filter_legend(fig, layout, extra):
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=layout.color[k], marker="o", markersize=4, label=f"filter {k}")
               for k in layout.ks]
    fig.legend(handles=handles + extra, loc="center right", fontsize=8, frameon=False)


def plot_gflops(plt, layout):
    from matplotlib.lines import Line2D

    fig, panels = grid(plt, layout, layout.series)
    peaks = []
    for ax, vol, s, rs in panels:
        for k, pts in forced_curves(rs, "gflops").items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3.5,
                    color=layout.color[k], linewidth=1.3)
        for r in rs:
            if r["point"] == "auto" and number(r["gflops"]) is not None:
                ax.plot(ko_of(r), number(r["gflops"]), marker="*", markersize=12, linestyle="",
                        color=layout.color[k_of(r)], markeredgecolor="k", zorder=5)
        peaks += [number(r["gflops"]) * 100 / number(r["pct_fma_peak"]) for r in rs
                  if number(r.get("pct_fma_peak")) and number(r.get("gflops"))]
        ko_axis(ax, [ko_of(r) for r in rs])
        ax.set_yscale("log")
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel("GFLOP/s (2 flops per tap, log)", fontsize=8)
    extra = [Line2D([], [], color="k", marker="*", markersize=11, linestyle="",
                    markerfacecolor="w", label="automatic plan")]
    if peaks:
        peak = statistics.median(peaks)
        for ax, *_ in panels:
            ax.axhline(peak, color="k", linestyle="--", linewidth=0.9)
        extra.append(Line2D([], [], color="k", linestyle="--", linewidth=0.9,
                            label=f"measured FMA peak\n({peak:.0f} GFLOP/s)"))
    filter_legend(fig, layout, extra)
    fig.suptitle(f"Register blocking: throughput against {layout.ko} per "
                 f"kernel ({layout.device})", fontsize=11)
    return fig


def plot_speedup(plt, layout):
    from matplotlib.lines import Line2D

    columns = [s for s in layout.series
               if any(len({ko_of(r) for r in layout.cells.get((vol, s), []) if r["point"] == "forced"}) > 1
                      for vol in layout.volumes)]
    if not columns:
        return None
    fig, panels = grid(plt, layout, columns)
    for ax, vol, s, rs in panels:
        curves = forced_curves(rs, "speedup_vs_ko1")
        kos = sorted({ko for pts in curves.values() for ko, _ in pts})
        if len(kos) < 2:
            ax.set_visible(False)
            continue
        for k, pts in curves.items():
            ax.plot(kos, [k * ko / (k + ko - 1) for ko in kos], color=layout.color[k],
                    linestyle=":", linewidth=1.0)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3.5,
                    color=layout.color[k], linewidth=1.3)
        ko_axis(ax, kos)
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel(f"time({layout.ko}=1) / time({layout.ko})", fontsize=8)
    filter_legend(fig, layout, [
        Line2D([], [], color="k", linewidth=1.3, label="measured, same\nkernel and shape"),
        Line2D([], [], color="k", linestyle=":", label=f"k*{layout.ko}/(k+{layout.ko}-1)")])
    fig.suptitle(f"Speedup over {layout.ko}=1 and the load factor ({layout.device})", fontsize=11)
    return fig


def plot_resources(plt, layout, rows):
    forced = [r for r in rows if r["point"] == "forced" and number(r.get("registers")) is not None]
    if not forced:
        return None
    fig, (ax_r, ax_o) = plt.subplots(1, 2, figsize=(11, 4.0))
    series = [s for s in layout.series if any(series_name(r) == s for r in forced)]
    for i, s in enumerate(series):
        by_ko = collections.defaultdict(list)
        for r in forced:
            if series_name(r) == s:
                by_ko[ko_of(r)].append(r)
        kos = sorted(by_ko)
        # A small offset along KO per series keeps equal values of two series apart.
        xs = [ko * 2 ** ((i - (len(series) - 1) / 2) * 0.06) for ko in kos]
        style = dict(marker=MARKERS[i % len(MARKERS)], markersize=4, color=f"C{i % 10}",
                     capsize=2, linewidth=1.3, label=s)
        for ax, key in ((ax_r, "registers"), (ax_o, "occupancy")):
            vals = [[number(r.get(key)) for r in by_ko[ko] if number(r.get(key)) is not None]
                    for ko in kos]
            mid = [statistics.median(v) for v in vals]
            err = [[m - min(v) for m, v in zip(mid, vals)], [max(v) - m for m, v in zip(mid, vals)]]
            ax.errorbar(xs, mid, yerr=err, **style)
            if key == "registers":
                for x, m, ko in zip(xs, mid, kos):
                    spill = max(number(r.get("spill_bytes")) or 0 for r in by_ko[ko])
                    if spill:
                        ax.annotate(f"spills {int(spill)} B", (x, m), fontsize=7,
                                    textcoords="offset points", xytext=(4, 4))
    for ax, label in ((ax_r, "registers per thread"), (ax_o, "theoretical occupancy")):
        ko_axis(ax, [ko_of(r) for r in forced])
        ax.set_xlabel(layout.ko_name)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7.5)
    ax_o.set_ylim(0, 1.05)
    fig.suptitle(f"Resources of the kernels that ran, median over the problems, bars min to max "
                 f"({layout.device})", fontsize=10)
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", default=".", help="folder for the PNG files")
    ap.add_argument("--prefix", default="")
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = load(args.csv)
    layout = Layout(rows)
    os.makedirs(args.out, exist_ok=True)
    figures = (("gflops_vs_ko.png", plot_gflops(plt, layout)),
               ("speedup_vs_ko.png", plot_speedup(plt, layout)),
               ("resources_vs_ko.png", plot_resources(plt, layout, rows)))
    for name, fig in figures:
        if fig is None:
            print(f"skipped {args.prefix + name}: "
                  + ("the sweep has no register or occupancy columns (a CPU sweep)"
                     if name.startswith("resources") else "no series was swept at several KO"))
            continue
        path = os.path.join(args.out, args.prefix + name)
        # The panel grids keep a margin on the right for the figure's legend.
        legend_room = 0 if name.startswith("resources") else 1.7 / fig.get_figwidth()
        fig.tight_layout(rect=(0, 0, 1 - legend_room, 0.96))
        fig.savefig(path, dpi=100)
        plt.close(fig)
        print("wrote", path)


if __name__ == "__main__":
    main()
