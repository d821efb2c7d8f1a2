"""One volume over several GPUs in one process: ``ndconv.ndimage.correlate`` of a 4D float32
volume held in pinned host memory with a dense 7^4 kernel, on the first GPU against the GPUs of
``--devices`` (the output in slabs along the slowest axis, one per GPU: docs/scale-out.md), whole
calls (uploads and downloads included). Measures in the same run each GPU's pinned copy rates
alone and all at once (the ceiling a split can reach), checks that the outputs are bit for bit
one GPU's, and prints one JSON object.

    python3 python/benchmarks/multi_gpu.py --devices cuda:0,1 --shape 20x160x160x160

Needs CuPy (pinned host memory, the copy rates). docs/records/ holds the runs.
"""

import argparse
import json
import statistics
import threading
import time

import numpy as np

import ndconv
import ndconv.ndimage as ndi


def pinned(shape, dtype=np.float32):
    import cupyx
    return cupyx.empty_pinned(shape, dtype=dtype)


def copy_rates(devices, host, repeats=5):
    """GB/s of host-to-device and device-to-host copies of `host` (pinned), each GPU alone and all
    at once (one thread per GPU)."""
    import cupy as cp

    buffers = {}
    for d in devices:
        with cp.cuda.Device(d):
            buffers[d] = cp.empty(host.shape, host.dtype)
            buffers[d].set(host)  # warm
            cp.cuda.Device(d).synchronize()

    def one(d, direction):
        with cp.cuda.Device(d):
            for _ in range(repeats):
                if direction == "up":
                    buffers[d].set(host)
                else:
                    buffers[d].get(out=host)
            cp.cuda.Device(d).synchronize()

    def timed(ds, direction):
        threads = [threading.Thread(target=one, args=(d, direction)) for d in ds]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return len(ds) * repeats * host.nbytes / (time.perf_counter() - start) / 1e9

    rates = {}
    for direction in ("up", "down"):
        for d in devices:
            rates[f"{direction}_gpu{d}_GBps"] = round(timed([d], direction), 1)
        rates[f"{direction}_all_GBps"] = round(timed(devices, direction), 1)
    del buffers
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", default="cuda:all")
    parser.add_argument("--shape", default="20x160x160x160", help="slowest axis first")
    parser.add_argument("--size", type=int, default=7, help="kernel taps per axis")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    shape = tuple(int(s) for s in args.shape.split("x"))
    rng = np.random.default_rng(1)
    volume = pinned(shape)
    volume[...] = rng.random(shape, dtype=np.float32)
    weights = rng.random((args.size,) * len(shape), dtype=np.float32)
    outputs = {name: pinned(shape) for name in ("one", "many")}
    listed = args.devices.split(":", 1)[1]
    gpus = ([d["index"] for d in ndconv.cuda_status()["devices"]] if listed == "all"
            else [int(d) for d in listed.split(",")])
    calls = {"one": f"cuda:{gpus[0]}", "many": args.devices}
    times = {}
    for name, device in calls.items():
        out = outputs[name]
        out[...] = np.nan
        ndi.correlate(volume, weights, output=out, mode="constant", device=device)  # warm-up
        samples = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            ndi.correlate(volume, weights, output=out, mode="constant", device=device)
            samples.append(time.perf_counter() - start)
        times[name] = statistics.median(samples)
    useful = 2.0 * volume.size * weights.size
    result = {
        "shape": shape,
        "kernel": [args.size] * len(shape),
        "devices": args.devices,
        "one_gpu_ms": round(times["one"] * 1e3, 2),
        "many_gpus_ms": round(times["many"] * 1e3, 2),
        "speedup": round(times["one"] / times["many"], 3),
        "one_gpu_useful_TFLOPs": round(useful / times["one"] / 1e12, 1),
        "bit_identical": bool(
            np.array_equal(outputs["one"].view(np.uint32), outputs["many"].view(np.uint32))),
        "copy_rates": copy_rates(gpus, outputs["one"]),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
