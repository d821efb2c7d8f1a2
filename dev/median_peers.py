"""The CPU median against scipy.ndimage.median_filter and itk::MedianImageFilter in one run.

A 160^3 float32 volume of random values; scipy's median_filter(size=3, mode='nearest') timed as
the median of --reps calls after one untimed call; then dev/median_itk (built as its header says)
on the same data, which times ndconv and ITK and writes ndconv's output, compared here with
scipy's voxel for voxel (bit for bit). A development probe; prints one JSON line.

    python dev/median_peers.py ./median_itk [--reps 5] [--threads 2]
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import scipy
import scipy.ndimage


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("median_itk")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--size", type=int, default=160)
    args = parser.parse_args()
    n = args.size
    volume = np.random.default_rng(45).uniform(-1, 1, (n, n, n)).astype(np.float32)
    scipy.ndimage.median_filter(volume, size=3, mode="nearest")
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        expected = scipy.ndimage.median_filter(volume, size=3, mode="nearest")
        times.append((time.perf_counter() - t0) * 1e3)
    scipy_ms = float(np.median(times))
    with tempfile.TemporaryDirectory() as folder:
        raw = os.path.join(folder, "in.raw")
        out = os.path.join(folder, "out.raw")
        volume.tofile(raw)
        line = subprocess.run(
            [args.median_itk, "--raw", raw, "--extent", str(n), str(n), str(n), "--radii", "1",
             "--threads", str(args.threads), "--reps", str(args.reps), "--out", out],
            check=True, capture_output=True, text=True).stdout.strip()
        result = json.loads(line)
        got = np.fromfile(out, dtype=np.float32).reshape(n, n, n)
    result["scipy_ms"] = round(scipy_ms, 2)
    result["scipy_over_ndconv"] = round(scipy_ms / result["ndconv_ms"], 2)
    result["scipy_differ"] = int(np.count_nonzero(got.view(np.uint32) != expected.view(np.uint32)))
    result["scipy"] = scipy.__version__
    print(json.dumps(result))


if __name__ == "__main__":
    main()
