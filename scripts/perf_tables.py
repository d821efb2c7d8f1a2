#!/usr/bin/env python3
"""Markdown tables for docs/study.md and docs/performance.md from a run's outputs, so that the
documents quote the committed data exactly.

usage: scripts/perf_tables.py study docs/study/sweep-h100.json
       scripts/perf_tables.py bench docs/data/peers-h100.json
"""
import json
import sys


def fmt(v, spec=".2f"):
    return "–" if v is None else format(v, spec)


def series_text(sr):
    """'blocked: 5.354 ms at KO=1, best KO 16 (6.58x; 8.50)' for one kernel family and shape."""
    name = sr["kernel"] + (f" TX={sr['tx']} {sr['block']}" if sr["kernel"] == "tiled" else "")
    return (f"{name}: KO=1 {fmt(sr.get('ko1_ms'), '.3f')} ms, best KO {sr['best_ko']} "
            f"({fmt(sr.get('speedup_best_vs_ko1'))}×; {fmt(sr.get('theoretical_load_factor_best'))})")


def study(path):
    d = json.load(open(path))
    if "ceilings" in d:
        c = d["ceilings"]
        print(f"GPU {d['device']['name']}, CUDA runtime {d['device']['cuda_runtime']}, "
              f"measured FMA peak {c['fma_peak_gflops']:.0f} GFLOP/s, copy {c['copy_bandwidth_gbs']:.0f} GB/s\n")
    else:
        print(f"CPU {d.get('cpu', {}).get('model', '')} (no ceilings measured)\n")
    if d["problems"] and "series" not in d["problems"][0] and "error" not in d["problems"][0]:
        sys.exit("perf_tables.py: this sweep JSON predates the kernel-keyed points; re-run the sweep")
    print("| dims | volume | k | best point | best ms | best GFLOP/s | % FMA peak | auto point | auto ms | auto loss | "
          "per kernel: KO=1 ms, best KO (speedup; k·KO/(k+KO−1)) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for p in d["problems"]:
        if "error" in p:
            print(f"| {p['dims']}D | {p['volume']} | {p['filter']} | {p['error']} |")
            continue
        per = "<br>".join(series_text(sr) for sr in p["series"])
        print(f"| {p['dims']}D | {p['volume']} | {p['filter']} | {p['best_point']} | {p['best_ms']:.3f} | "
              f"{p['best_gflops']:.0f} | {fmt(p.get('best_pct_fma_peak'), '.1f')}% | {p['auto_point']} | {p['auto_ms']:.3f} | "
              f"+{p['auto_loss_pct']:.1f}% | {per} |")
    o = d["overall"]
    print(f"\npoints {o['points']}, validation failures {o['validation_failures']}, not implementable "
          f"{o.get('not_implementable', 0)}, automatic plan within 5% of the best point: "
          f"{o['auto_within_5pct_of_best']} of {o['problems']}")


def bench(path):
    d = json.load(open(path))
    nd = d["ndconv"]
    c = nd.get("ceilings", {})
    print(f"{d['gpu']} ({d['nvidia_smi']}); {d['versions']}; measured FMA peak "
          f"{c.get('fma_peak_gflops', 0):.0f} GFLOP/s, copy {c.get('copy_bandwidth_gbs', 0):.0f} GB/s; {d['date']}\n")
    peers = {}
    for r in d["ratios"]:
        peers.setdefault(r["workload"], []).append(r)
    print("| workload | ndconv device ms (min) | GFLOP/s | vs ceiling | target | met | plan | auto vs best KO | worst other boundary | whole call ms | CuPy ms (×) | PyTorch ms (×) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for w in nd["workloads"]:
        name = w["workload"]
        dt = w.get("device_time", {})
        if "pct_fma_peak" in w:
            ceil = f"{w['pct_fma_peak']:.1f}% of FMA peak"
        elif "floor_ratio" in w:
            ceil = f"{w['floor_ratio']:.2f}× memory floor"
        elif "speedup_vs_peer" in w:
            ceil = f"{w['speedup_vs_peer']:.1f}× ITK"
        else:
            ceil = w.get("error", w.get("peer", ""))
        met = {True: "yes", False: "**no**"}.get(w.get("target_met"), "–")
        plan = w.get("plan", {}).get("describe", "")
        auto = f"+{w['auto_loss_pct']:.1f}% (best KO {w['best_ko']})" if "auto_loss_pct" in w else "–"
        bnd = f"+{w['worst_boundary_extra_pct']:.1f}%" if "worst_boundary_extra_pct" in w else "–"
        call = w.get("call_time", {}).get("median_ms")
        cup = tor = "–"
        for r in peers.get(name, []):
            if r.get("peer_ms") is None:
                continue
            cell = f"{r['peer_ms']:.3f} ({r['peer_over_ndconv']:.1f}×)"
            if r["peer"].startswith("cupy"):
                cup = cell
            else:
                tor = cell
        print(f"| {name} | {fmt(dt.get('median_ms'), '.4f')} ({fmt(dt.get('min_ms'), '.4f')}) | {fmt(w.get('gflops'), '.0f')} | "
              f"{ceil} | {w['target']} | {met} | {plan} | {auto} | {bnd} | {fmt(call, '.2f')} | {cup} | {tor} |")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("study", "bench"):
        sys.exit(__doc__)
    (study if sys.argv[1] == "study" else bench)(sys.argv[2])
