#!/usr/bin/env python3
"""Runs ndconv's bench and, in the same run on the same GPU and sizes, the peers a user would
reach for: CuPy (cupyx.scipy.ndimage.correlate / gaussian_filter / median_filter) and PyTorch (conv2d/conv3d
through cuDNN, TF32 off, benchmark mode on; the Gaussian as three 1D conv3d passes). Prints a
table of times and ratios and writes one JSON file with everything.

Peers are timed like ndconv's device times: data already on the GPU, CUDA events around the
call, warm-up first, median of repetitions, L2 flushed (a buffer of twice the L2 overwritten)
before each repetition. Each peer's result is checked against the other peer (and the Gaussian's
against CuPy's) by relative L2 error, so a peer that computes something else is noticed; CuPy's
median (median* rows, replicate boundary = mode "nearest") against scipy's on a corner crop.

The tensor-core dense rows (dense3d_7_tc, dense3d_11_tc: one dense filter on 256^3 integers
0..255, ndconv on the tensor cores) are compared with the same correlation of the same data by
CuPy (float32) and by PyTorch's conv3d three ways: TF32 off (FP32), TF32 allowed (cuDNN rounds
the operands to TF32: the weights lose bits, the 8-bit data stays exact) and in float16 (data
exact, weights rounded to half); each against a float64 sum at random voxels (relative L2).

The filter bank rows (bank_3d, bank_4d, bank_sum_3d) are compared with CuPy doing the same F
correlations (cupyx.scipy.ndimage.correlate once per filter, zero boundary; bank_sum_3d also the
weighted sum of the F responses), timed as one call over all F, with --bank-reps repetitions;
CuPy's first response is checked against a float64 sum at random voxels.

usage: scripts/peers.py --ndconv build-dev/src/perf/ndconv-perf --out peers.json
       [--bench-json bench.json] [--reps 20] [--bank-reps 5] [--workload dense3d_11,...]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

WORKLOADS = {
    # name: (numpy shape, slowest axis first; dense filter extent or None; sigma)
    "dense3d_11": ((256, 256, 256), 11, None),
    "dense3d_5": ((256, 256, 256), 5, None),
    "dense4d_7": ((16, 96, 96, 96), 7, None),
    "dense2d_17": ((4096, 4096), 17, None),
    "gauss3d_s2": ((256, 256, 256), None, 2.0),
}

MEDIANS = {
    # name: (numpy shape, slowest axis first; radius along every axis). ndconv's boundary is
    # replicate, which is scipy's and CuPy's mode "nearest".
    "median3d_r1": ((256, 256, 256), 1),
    "median3d_r3": ((256, 256, 256), 3),
    "median2d_r3": ((4096, 4096), 3),
}


def median_peer(cp, cnd, np, x_np, radius, timed):
    """CuPy's median_filter on x_np (mode nearest), timed, and checked against scipy's on a crop
    that holds a corner of the volume (both boundaries of every axis are checked by ndconv's own
    row against its CPU median)."""
    size = 2 * radius + 1
    x_cp = cp.asarray(x_np)
    out_cp = cnd.median_filter(x_cp, size=size, mode="nearest")
    row = timed(lambda: cnd.median_filter(x_cp, size=size, mode="nearest"))
    try:
        import scipy.ndimage as snd
    except ImportError:
        row["rel_l2_vs_scipy"] = None  # scipy not installed: CuPy's result is not checked
        return row
    crop = tuple(slice(0, min(n, 48)) for n in x_np.shape)
    ref = snd.median_filter(x_np[crop], size=size, mode="nearest").astype(np.float64)
    inner = tuple(slice(0, min(n, 48) - radius) for n in x_np.shape)  # away from the crop's cut
    got = cp.asnumpy(out_cp)[crop][inner].astype(np.float64)
    row["rel_l2_vs_scipy"] = float(np.linalg.norm((got - ref[inner]).ravel()) /
                                   np.linalg.norm(ref[inner].ravel()))
    return row


TC_DENSE_WORKLOADS = {
    # name: (numpy shape, slowest axis first; dense filter extent); 8-bit data
    "dense3d_7_tc": ((256, 256, 256), 7),
    "dense3d_11_tc": ((256, 256, 256), 11),
}

BANK_WORKLOADS = {
    # name: (numpy shape, slowest axis first; filter extent; filters; weighted sum)
    "bank_3d": ((256, 256, 256), 7, 12, False),
    "bank_4d": ((32, 128, 128, 128), 7, 24, False),
    "bank_sum_3d": ((256, 256, 256), 11, 7, True),
}


def run_ndconv(binary, bench_json, workloads, reps):
    cmd = [binary, "bench", "--json", bench_json, "--force", "--reps", str(reps)]
    if workloads:
        cmd += ["--workload", ",".join(workloads)]
    print("+", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd)
    if proc.returncode not in (0, 3):  # 3: results written, some validation failed
        sys.exit(f"peers.py: ndconv bench failed with exit code {proc.returncode}")
    with open(bench_json) as f:
        return json.load(f), proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ndconv", required=True, help="ndconv-perf (or ndconv) binary")
    ap.add_argument("--out", required=True, help="JSON output")
    ap.add_argument("--bench-json", default=None, help="where ndconv writes its JSON")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--bank-reps", type=int, default=5, help="repetitions of the bank rows' peers")
    ap.add_argument("--workload", default="", help="comma-separated subset")
    args = ap.parse_args()
    chosen = [w for w in args.workload.split(",") if w] or list(WORKLOADS) + ["cpu3d_7"] + list(
        MEDIANS) + list(BANK_WORKLOADS) + list(TC_DENSE_WORKLOADS)
    bench_json = args.bench_json or os.path.splitext(args.out)[0] + "-ndconv.json"
    ndconv, ndconv_rc = run_ndconv(args.ndconv, bench_json, chosen, args.reps)

    import cupy as cp
    import cupyx.scipy.ndimage as cnd
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * max(props.L2_cache_size, 1 << 20), dtype=torch.uint8, device=dev)

    def timed(fn, reps=None):
        for _ in range(args.warmup):
            fn()
        torch.cuda.synchronize()
        cp.cuda.Device().synchronize()
        samples = []
        for r in range(reps or args.reps):
            flush.fill_(r & 0xFF)
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            samples.append(start.elapsed_time(stop))
        samples.sort()
        n = len(samples)
        med = samples[n // 2] if n % 2 else 0.5 * (samples[n // 2 - 1] + samples[n // 2])
        return {"median_ms": med, "min_ms": samples[0], "repetitions": n}

    def rel(a_torch, b_cupy):
        """||a - b|| / ||b|| in float64 on the host, from independent copies of both results."""
        a = a_torch.detach().double().cpu().numpy()
        b = cp.asnumpy(b_cupy).astype(np.float64)
        return float(np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel()))

    # CuPy and PyTorch share the CUDA runtime's default stream on device 0, so the torch events
    # bracket CuPy's kernels too (both run on the legacy default stream).
    rng = np.random.default_rng()
    rows = {}
    for name in chosen:
        if name in MEDIANS:
            shape, radius = MEDIANS[name]
            x_np = rng.uniform(-1, 1, size=shape).astype(np.float32)
            rows[name] = {"cupy_median_filter": median_peer(cp, cnd, np, x_np, radius, timed)}
            cp.get_default_memory_pool().free_all_blocks()
            continue
        if name not in WORKLOADS:
            continue
        shape, k, sigma = WORKLOADS[name]
        x_np = rng.uniform(-1, 1, size=shape).astype(np.float32)
        x_cp = cp.asarray(x_np)
        x_t = torch.as_tensor(x_np, device=dev)
        row = {}
        if k is not None:
            w_np = (rng.uniform(-1, 1, size=(k,) * len(shape)) / np.sqrt(k ** len(shape))).astype(np.float32)
            w_cp = cp.asarray(w_np)
            out_cp = cnd.correlate(x_cp, w_cp, mode="constant", cval=0.0)
            row["cupy_correlate"] = timed(lambda: cnd.correlate(x_cp, w_cp, mode="constant", cval=0.0))
            w_t = torch.as_tensor(w_np, device=dev)[None, None]
            conv = {2: F.conv2d, 3: F.conv3d}.get(len(shape))
            if conv is not None:
                xin = x_t[None, None]
                out_t = conv(xin, w_t, padding=k // 2)[0, 0]
                row["torch_conv"] = timed(lambda: conv(xin, w_t, padding=k // 2))
                row["torch_conv"]["rel_l2_vs_cupy"] = rel(out_t, out_cp)
            else:
                row["torch_conv"] = None  # PyTorch has no 4D convolution
        else:
            out_cp = cnd.gaussian_filter(x_cp, sigma=sigma, mode="constant", cval=0.0, truncate=4.0)
            row["cupy_gaussian_filter"] = timed(
                lambda: cnd.gaussian_filter(x_cp, sigma=sigma, mode="constant", cval=0.0, truncate=4.0))
            radius = int(4.0 * sigma + 0.5)
            t = torch.arange(-radius, radius + 1, device=dev, dtype=torch.float64)
            g = torch.exp(-0.5 * (t / sigma) ** 2)
            g = (g / g.sum()).float()
            ws = [g.view(1, 1, -1, 1, 1), g.view(1, 1, 1, -1, 1), g.view(1, 1, 1, 1, -1)]
            pads = [(radius, 0, 0), (0, radius, 0), (0, 0, radius)]

            def three_pass():
                y = x_t[None, None]
                for w, p in zip(ws, pads):
                    y = F.conv3d(y, w, padding=p)
                return y

            out_t = three_pass()[0, 0]
            row["torch_3x_conv3d"] = timed(three_pass)
            row["torch_3x_conv3d"]["rel_l2_vs_cupy"] = rel(out_t, out_cp)
        rows[name] = row
        del x_cp, x_t
        cp.get_default_memory_pool().free_all_blocks()
        torch.cuda.empty_cache()

    def sampled_error(x_np, w_np, out_cp, count=256):
        """Relative L2 error of CuPy's correlation at random voxels against a float64 sum (zero
        boundary), so that a peer computing something else is noticed."""
        k = w_np.shape[0]
        r = k // 2
        padded = np.pad(x_np.astype(np.float64), r)
        picks = [rng.integers(0, n, size=count) for n in x_np.shape]
        got = cp.asnumpy(out_cp[tuple(cp.asarray(p) for p in picks)]).astype(np.float64)
        ref = np.array([np.sum(padded[tuple(slice(p[i], p[i] + k) for p in picks)] * w_np)
                        for i in range(count)])
        return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))

    for name in chosen:
        if name not in BANK_WORKLOADS:
            continue
        shape, k, count, weighted = BANK_WORKLOADS[name]
        x_np = rng.uniform(-1, 1, size=shape).astype(np.float32)
        x_cp = cp.asarray(x_np)
        ws_np = [(rng.uniform(-1, 1, size=(k,) * len(shape)) / np.sqrt(k ** len(shape))).astype(np.float32)
                 for _ in range(count)]
        ws_cp = [cp.asarray(w) for w in ws_np]
        outs = [cp.empty_like(x_cp) for _ in range(count)]
        weights = [cp.asarray(rng.uniform(-1, 1, size=shape).astype(np.float32)) for _ in range(count)] if weighted else None
        total = cp.empty_like(x_cp)

        def bank():
            for w, o in zip(ws_cp, outs):
                cnd.correlate(x_cp, w, output=o, mode="constant", cval=0.0)
            if weighted:
                total.fill(0)
                for wt, o in zip(weights, outs):
                    total[...] += wt * o

        bank()
        key = "cupy_correlate_x%d%s" % (count, "_weighted_sum" if weighted else "")
        rows[name] = {key: timed(bank, args.bank_reps)}
        rows[name][key]["rel_l2_vs_float64_sample"] = sampled_error(x_np, ws_np[0], outs[0])
        del x_cp, outs, ws_cp, weights, total
        cp.get_default_memory_pool().free_all_blocks()

    for name in chosen:
        if name not in TC_DENSE_WORKLOADS:
            continue
        shape, k = TC_DENSE_WORKLOADS[name]
        x_np = rng.integers(0, 256, size=shape).astype(np.float32)
        w_np = (rng.uniform(-1, 1, size=(k,) * 3) / np.sqrt(k ** 3)).astype(np.float32)
        x_cp, w_cp = cp.asarray(x_np), cp.asarray(w_np)
        row = {"cupy_correlate": timed(lambda: cnd.correlate(x_cp, w_cp, mode="constant", cval=0.0))}
        row["cupy_correlate"]["rel_l2_vs_float64_sample"] = sampled_error(
            x_np, w_np, cnd.correlate(x_cp, w_cp, mode="constant", cval=0.0))
        for label, dtype, tf32 in (("torch_conv3d_fp32", torch.float32, False),
                                   ("torch_conv3d_tf32", torch.float32, True),
                                   ("torch_conv3d_fp16", torch.float16, False)):
            torch.backends.cudnn.allow_tf32 = tf32
            xin = torch.as_tensor(x_np, device=dev).to(dtype)[None, None]
            w_t = torch.as_tensor(w_np, device=dev).to(dtype)[None, None]
            row[label] = timed(lambda: F.conv3d(xin, w_t, padding=k // 2))
            out = cp.asarray(F.conv3d(xin, w_t, padding=k // 2)[0, 0].float().contiguous())
            row[label]["rel_l2_vs_float64_sample"] = sampled_error(x_np, w_np, out)
            del xin, w_t, out
        torch.backends.cudnn.allow_tf32 = False
        rows[name] = row
        del x_cp, w_cp
        cp.get_default_memory_pool().free_all_blocks()
        torch.cuda.empty_cache()

    table = []
    by_name = {w["workload"]: w for w in ndconv["workloads"]}
    print()
    print(f"{'workload':<11} {'ndconv_ms':>10} {'peer':<22} {'peer_ms':>9} {'peer/ndconv':>11}")
    for name in chosen:
        nd = by_name.get(name, {})
        nd_ms = nd.get("device_time", {}).get("median_ms")
        if name == "cpu3d_7":
            print(f"{name:<11} {nd_ms if nd_ms else float('nan'):>10.3f} {'(ITK: ndconv bench)':<22}")
            continue
        for peer, t in rows.get(name, {}).items():
            if t is None:
                print(f"{name:<11} {nd_ms:>10.4f} {peer:<22} {'n/a':>9}")
                table.append({"workload": name, "peer": peer, "note": "PyTorch has no 4D convolution"})
                continue
            ratio = t["median_ms"] / nd_ms if nd_ms else None
            table.append({"workload": name, "peer": peer, "peer_ms": t["median_ms"],
                          "ndconv_ms": nd_ms, "peer_over_ndconv": ratio})
            print(f"{name:<11} {nd_ms:>10.4f} {peer:<22} {t['median_ms']:>9.3f} {ratio:>10.1f}x")

    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": props.name,
        "nvidia_smi": smi,
        "versions": {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                     "cudnn": torch.backends.cudnn.version(), "cupy": cp.__version__,
                     "cuda_runtime_cupy": cp.cuda.runtime.runtimeGetVersion(),
                     "python": sys.version.split()[0]},
        "settings": {"tf32": "off, except the rows named torch_conv3d_tf32", "cudnn_benchmark": True, "warmup": args.warmup,
                     "repetitions": args.reps, "l2_flush": True,
                     "boundary": "zero (cupy mode='constant'; torch zero padding); median rows: "
                                 "replicate (cupy mode='nearest')"},
        "ndconv_exit_code": ndconv_rc,
        "ndconv": ndconv,
        "peers": rows,
        "ratios": table,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
