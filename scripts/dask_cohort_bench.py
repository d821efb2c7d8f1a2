"""A cohort through ndconv.dask on a LocalCluster against the command line's batch of the same
files: throughput ratio (batch seconds / cohort seconds), with the cluster already running (its
first cohort, which starts each worker's kept command line, and a second one), with a command line
per task instead (persistent=False), with one file a task, and with the cluster's start-up
counted; and whether every output is the batch's, byte for byte.

    .venv/bin/python scripts/dask_cohort_bench.py --cli build/src/cli/ndconv --files 16 --size 256 \
        --workers 2 -- --sigma 2 --threads 1

Writes its files under a temporary folder and removes them. docs/scale-out.md#measured.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ndconv
import ndconv.dask as nd


def _identical(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    return names == sorted(p.name for p in b.iterdir()) and all(
        (a / n).read_bytes() == (b / n).read_bytes() for n in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--size", type=int, default=256, help="voxels per axis (int16 cubes)")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--subcommand", default="smooth")
    argv = sys.argv[1:]
    options = argv[argv.index("--") + 1:] if "--" in argv else ["--sigma", "2"]
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)

    from distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "in").mkdir()
        rng = np.random.default_rng(1)
        inputs = []
        for i in range(args.files):
            path = root / "in" / f"v{i:03d}.nii.gz"
            ndconv.write(path, rng.integers(0, 1000, (args.size,) * 3).astype(np.int16))
            inputs.append(str(path))
        for name in ("batch", "warm", "again", "process", "single", "cold"):
            (root / name).mkdir()

        start = time.perf_counter()
        subprocess.run([args.cli, args.subcommand, *inputs, "-o", str(root / "batch"), *options],
                       check=True, capture_output=True)
        batch = time.perf_counter() - start

        with LocalCluster(n_workers=args.workers, threads_per_worker=1,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            started = time.perf_counter()
            result = nd.filter_files([args.subcommand, *options], inputs, str(root / "warm") + "/",
                                     client=client, cli=args.cli)
            warm = time.perf_counter() - started
            assert result.ok, result.failed
            started = time.perf_counter()
            result = nd.filter_files([args.subcommand, *options], inputs, str(root / "again") + "/",
                                     client=client, cli=args.cli)
            again = time.perf_counter() - started
            assert result.ok, result.failed
            started = time.perf_counter()
            result = nd.filter_files([args.subcommand, *options], inputs,
                                     str(root / "process") + "/", client=client, cli=args.cli,
                                     persistent=False)
            process = time.perf_counter() - started
            assert result.ok, result.failed
            started = time.perf_counter()
            result = nd.filter_files([args.subcommand, *options], inputs,
                                     str(root / "single") + "/", client=client, cli=args.cli,
                                     files_per_task=1)
            single = time.perf_counter() - started
        assert result.ok, result.failed

        start = time.perf_counter()
        result = nd.filter_files([args.subcommand, *options], inputs, str(root / "cold") + "/",
                                 workers=args.workers, cli=args.cli)
        cold = time.perf_counter() - start
        assert result.ok, result.failed

        print(f"{args.files} files of {args.size}^3 int16, {args.subcommand} {' '.join(options)}, "
              f"{args.workers} workers, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
        print(f"batch {batch:.2f} s")
        print(f"cohort, cluster running {warm:.2f} s: {batch / warm:.2f}x the batch's throughput")
        print(f"the same again (each worker's command line kept) {again:.2f} s: "
              f"{batch / again:.2f}x")
        print(f"a command line per task (persistent=False) {process:.2f} s: {batch / process:.2f}x")
        print(f"cohort, cluster started {cold:.2f} s: {batch / cold:.2f}x")
        print(f"cohort of one file a task (files_per_task=1), cluster running "
              f"{single:.2f} s: {batch / single:.2f}x")
        same = all(_identical(root / name, root / "batch")
                   for name in ("warm", "again", "process", "single", "cold"))
        print(f"outputs identical to the batch's: {same}")


if __name__ == "__main__":
    main()
