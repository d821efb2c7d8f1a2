"""ndconv.dask on GPUs, two measurements in one run (docs/scale-out.md#measured):

- ``arrays``: ``ndconv.dask.gaussian_filter`` against dask-image's ``gaussian_filter`` (which
  runs cupyx.scipy.ndimage on CuPy chunks) on the same dask array of CuPy chunks on one GPU, the
  same chunks, sigma 2; the input persisted on the GPU first, each result persisted (every chunk
  computed and kept on the GPU), the largest difference reported.
- ``cohort``: echo-like 4D series filtered by ``ndconv adaptive`` as files: the command line's
  batch on the first GPU and on all listed GPUs, and ``ndconv.dask.filter_files`` on a
  dask-cuda ``LocalCUDACluster`` of one worker against one worker per GPU (its default tasks, a
  few files each, and one file a task); every output byte for byte the first batch's.

    python3 python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256
    python3 python/benchmarks/dask_gpu.py cohort --cli bin/ndconv --files 8 --gpus 0,1

Prints one JSON object. Needs CuPy, dask, distributed, dask-image and dask-cuda.
"""

import argparse
import filecmp
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np


def arrays(args):
    import cupy as cp
    import dask
    import dask.array as da
    import dask_image.ndfilters as dask_image

    import ndconv.dask as nd

    dask.config.set(scheduler="threads")
    shape = (args.size,) * 3
    x = da.from_array(cp.random.default_rng(1).random(shape, dtype=cp.float32),
                      chunks=args.chunk, asarray=False).persist()
    cp.cuda.Device().synchronize()

    def timed(make):
        best = None
        for _ in range(args.repeats):
            start = time.perf_counter()
            y = make().persist()
            cp.cuda.Device().synchronize()
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        return best, y

    from ndconv.dask import _halo

    ours_s, ours = timed(lambda: nd.gaussian_filter(x, args.sigma, mode="reflect"))
    theirs_s, theirs = timed(lambda: dask_image.gaussian_filter(x, args.sigma, mode="reflect"))
    # Where ndconv.dask's time goes: the same halo graph with the filter left out (each block's
    # input assembled from its neighbours, nothing filtered), and the filter on one assembled
    # block times the blocks.
    depth = int(4 * args.sigma + 0.5)
    reach = [_halo.Reach(depth, {"reflect"}) for _ in shape]
    copy_s, _ = timed(lambda: _halo.overlap_filter(x, lambda block: block, reach, cp.float32))
    block = cp.random.default_rng(2).random((args.chunk + 2 * depth,) * 3, dtype=cp.float32)
    filter_s = min(_timed_call(lambda: ndimage_gaussian(block, args.sigma), cp)
                   for _ in range(args.repeats)) * x.npartitions
    difference = float(abs(ours - theirs).max().compute())
    return {
        "shape": shape,
        "chunks": args.chunk,
        "sigma": args.sigma,
        "ndconv_dask_s": round(ours_s, 3),
        "dask_image_cupyx_s": round(theirs_s, 3),
        "ratio": round(theirs_s / ours_s, 2),
        "halo_graph_without_filter_s": round(copy_s, 4),
        "filter_of_every_block_s": round(filter_s, 4),
        "max_abs_difference": difference,
        "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
    }


def ndimage_gaussian(block, sigma):
    import ndconv.ndimage

    return ndconv.ndimage.gaussian_filter(block, sigma, mode="reflect")


def _timed_call(call, cp):
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    call()
    cp.cuda.Device().synchronize()
    return time.perf_counter() - start


def _same_outputs(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    return names == sorted(p.name for p in b.iterdir()) and all(
        filecmp.cmp(a / n, b / n, shallow=False) for n in names)


def cohort(args):
    from dask_cuda import LocalCUDACluster
    from distributed import Client

    import ndconv
    import ndconv.dask as nd

    gpus = [int(g) for g in args.gpus.split(",")]
    command = ["adaptive", "--preset", "echo", "--type", "uint8"]
    result = {"files": args.files, "series": args.shape, "command": command, "gpus": gpus}
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        root = Path(tmp)
        (root / "in").mkdir()
        rng = np.random.default_rng(1)
        shape = tuple(int(s) for s in args.shape.split("x"))
        inputs = []
        for i in range(args.files):
            path = root / "in" / f"s{i}.nii"
            ndconv.write(path, (rng.random(shape) * 255).astype(np.uint8),
                         spacing=(0.05, 0.6, 0.6, 0.6))
            inputs.append(str(path))

        def batch(name, device):
            (root / name).mkdir()
            start = time.perf_counter()
            subprocess.run([args.cli, *command[:1], *inputs, "-o", str(root / name) + "/",
                            *command[1:], "--device", device], check=True, capture_output=True)
            return time.perf_counter() - start

        result["batch_one_gpu_s"] = round(batch("batch1", f"cuda:{gpus[0]}"), 2)
        result["batch_all_gpus_s"] = round(batch("batchN", "cuda:" + args.gpus), 2)
        result["batch_speedup"] = round(result["batch_one_gpu_s"] / result["batch_all_gpus_s"], 3)

        def on_cluster(name, devices, files_per_task=None):
            (root / name).mkdir()
            with LocalCUDACluster(CUDA_VISIBLE_DEVICES=devices, threads_per_worker=1,
                                  dashboard_address=None) as cluster, Client(cluster) as client:
                client.wait_for_workers(len(devices.split(",")))
                start = time.perf_counter()
                done = nd.filter_files(command + ["--device", "cuda"], inputs, root / name,
                                       client=client, cli=args.cli,
                                       files_per_task=files_per_task)
                elapsed = time.perf_counter() - start
            if not done.ok:
                raise SystemExit(done.summary())
            return elapsed

        result["cluster_one_worker_s"] = round(on_cluster("dask1", str(gpus[0])), 2)
        result["cluster_all_workers_s"] = round(on_cluster("daskN", args.gpus), 2)
        result["cluster_speedup"] = round(
            result["cluster_one_worker_s"] / result["cluster_all_workers_s"], 3)
        # The same with one command line per file (files_per_task=1).
        result["cluster_one_worker_file_per_task_s"] = round(
            on_cluster("dask1f", str(gpus[0]), 1), 2)
        result["cluster_all_workers_file_per_task_s"] = round(on_cluster("daskNf", args.gpus, 1), 2)
        result["outputs_byte_identical"] = all(
            _same_outputs(root / "batch1", root / other)
            for other in ("batchN", "dask1", "daskN", "dask1f", "daskNf"))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    a = sub.add_parser("arrays")
    a.add_argument("--size", type=int, default=1024)
    a.add_argument("--chunk", type=int, default=256)
    a.add_argument("--sigma", type=float, default=2.0)
    a.add_argument("--repeats", type=int, default=3)
    c = sub.add_parser("cohort")
    c.add_argument("--cli", required=True)
    c.add_argument("--files", type=int, default=8)
    c.add_argument("--shape", default="20x160x160x160", help="slowest axis first")
    c.add_argument("--gpus", default="0,1")
    c.add_argument("--work", default=None, help="where the files go (default: the temp folder)")
    args = parser.parse_args()
    print(json.dumps(arrays(args) if args.what == "arrays" else cohort(args), indent=1))


if __name__ == "__main__":
    main()
