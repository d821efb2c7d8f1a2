"""ndconv.dask on GPUs, two measurements in one run (docs/scale-out.md#measured):

- ``arrays``: ``ndconv.dask.gaussian_filter`` against dask-image's ``gaussian_filter`` (which
  runs cupyx.scipy.ndimage on CuPy chunks) on the same dask array of CuPy chunks on one GPU, the
  same chunks, sigma 2; the input persisted on the GPU first, each result persisted (every chunk
  computed and kept on the GPU), the largest difference reported.
- ``cohort``: echo-like 4D series filtered by ``ndconv adaptive`` as files: the command line's
  batch on the first GPU and on all listed GPUs, and ``ndconv.dask.filter_files`` on a
  dask-cuda ``LocalCUDACluster`` of one worker against one worker per GPU: its default tasks (a
  few files each, sent to each worker's kept ``ndconv serve``), a command line per task, and one
  file a task; each twice on the running cluster (the kept command lines start in the first);
  every output byte for byte the first batch's.
- ``adaptive``: ``ndconv.dask.adaptive_filter`` (two passes: the blocks' scales, then the
  filter) against ``ndconv.adaptive_filter`` on the whole series at once, on one GPU: the same
  echo-like series as one chunk and cut along z, each result bit for bit the whole call's; the
  scale pass alone (``ndconv.adaptive_scales``) beside them.

    python3 python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 [--breakdown]
    python3 python/benchmarks/dask_gpu.py cohort --cli bin/ndconv --files 8 --gpus 0,1
    python3 python/benchmarks/dask_gpu.py adaptive --chunks 1,2,4

Prints one line per entry. Needs CuPy, dask, distributed, dask-image and dask-cuda.
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
    whole = cp.random.default_rng(1).random(shape, dtype=cp.float32)
    x = da.from_array(whole, chunks=args.chunk, asarray=False).persist()
    cp.cuda.Device().synchronize()

    def timed(make, **scheduler):
        """Best of the repeats: seconds until every chunk is computed on the GPU, and until
        persist returned (the host's share); the previous result freed before each run."""
        best, y = None, None
        for _ in range(args.repeats):
            y = None
            start = time.perf_counter()
            y = make().persist(**scheduler)
            returned = time.perf_counter() - start
            cp.cuda.Device().synchronize()
            elapsed = time.perf_counter() - start
            best = (elapsed, returned) if best is None or elapsed < best[0] else best
        return best[0], best[1], y

    from ndconv.dask import _halo

    ours_s, _, ours = timed(lambda: nd.gaussian_filter(x, args.sigma, mode="reflect"))
    theirs_s, _, theirs = timed(lambda: dask_image.gaussian_filter(x, args.sigma, mode="reflect"))
    # Where ndconv.dask's time goes: the same halo graph with the filter left out (each block's
    # input assembled from its neighbours, nothing filtered), and the filter on one assembled
    # block times the blocks.
    depth = int(4 * args.sigma + 0.5)
    reach = [_halo.Reach(depth, {"reflect"}) for _ in shape]
    copy_s, _, _ = timed(lambda: _halo.overlap_filter(x, lambda block: block, reach, cp.float32))
    block = cp.random.default_rng(2).random((args.chunk + 2 * depth,) * 3, dtype=cp.float32)
    filter_s = min(_timed_call(lambda: ndimage_gaussian(block, args.sigma), cp)
                   for _ in range(args.repeats)) * x.npartitions
    difference = float(abs(ours - theirs).max().compute())
    reference = ndimage_gaussian(whole, args.sigma)  # the whole array at once
    identical = bool(cp.array_equal(ours.compute(), reference))
    result = {
        "shape": shape,
        "chunks": args.chunk,
        "sigma": args.sigma,
        "ndconv_dask_s": round(ours_s, 4),
        "dask_image_cupyx_s": round(theirs_s, 4),
        "ratio": round(theirs_s / ours_s, 2),
        "halo_graph_without_filter_s": round(copy_s, 4),
        "filter_of_every_block_s": round(filter_s, 4),
        "max_abs_difference_to_dask_image": difference,
        "bit_identical_to_the_whole_array": identical,
        "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
    }
    del ours, theirs
    if args.breakdown:
        result["breakdown"] = _breakdown(args, cp, nd, _halo, x, whole, reference, timed)
    return result


def _breakdown(args, cp, nd, _halo, x, whole, reference, timed):
    """The parts of ndconv.dask's time, each alone (seconds, best of the repeats), and the whole
    persisted call for every way of putting the blocks together and every scheduler."""
    out = {}

    def guarded(name, measure):
        try:
            out[name] = measure()
        except Exception as error:  # one failed part must not hide the others' numbers
            out[name] = f"failed: {type(error).__name__}: {error}"

    def make():
        return nd.gaussian_filter(x, args.sigma, mode="reflect")

    def construction():
        best = None
        for _ in range(args.repeats):
            start = time.perf_counter()
            make()
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        return round(best, 5)

    guarded("graph_construction_s", construction)

    def trivial_tasks():
        # The same graph (64 tasks, each on its 27 neighbours), every task returning its first
        # input at once: dask's own cost of the graph.
        real = _halo._assemble_and_filter
        _halo._assemble_and_filter = lambda *blocks, **task: blocks[0]
        try:
            return {name: round(timed(make, **scheduler)[0], 5)
                    for name, scheduler in _SCHEDULERS if name in ("threads", "sync")}
        finally:
            _halo._assemble_and_filter = real

    guarded("dask_with_trivial_tasks_s", trivial_tasks)

    def tasks():
        y = make()
        return [(task[0].keywords, [x.blocks[key[1:]].compute() for key in task[1:]])
                for task in dict(y.dask.layers[y.name]).values()]

    every_task = tasks()
    from ndconv.dask import _gpu_halo

    def assembly_alone(kind):
        # One thread, no dask: every block's halo'd input put together, back to back.
        def assemble(task, blocks):
            halo = cp.empty(task["shape"], dtype=blocks[0].dtype)
            if kind == "kernel" and task["layout"] is not None:
                _gpu_halo.gather(cp, halo, task["layout"], blocks)
            else:
                _gpu_halo.copy_pieces(halo, task["pieces"], blocks)
            return halo

        return _one_thread(cp, lambda: [assemble(a, b) for a, b in every_task], args.repeats)

    for kind in ("pieces", "kernel"):
        guarded(f"assembly_alone_{kind}", lambda kind=kind: assembly_alone(kind))

    def filter_alone():
        halos = []
        for task, blocks in every_task:
            halo = cp.empty(task["shape"], dtype=blocks[0].dtype)
            _gpu_halo.copy_pieces(halo, task["pieces"], blocks)
            halos.append(halo)
        return _one_thread(cp, lambda: [ndimage_gaussian(h, args.sigma) for h in halos],
                           args.repeats)

    guarded("filter_alone", filter_alone)
    del every_task

    def filter_by_shape():
        # One block's filter against its extents: the interior block's 272^3; its rows widened to
        # 288, 320 or 384 (the column kernel's x tiles are 128 wide; the engine takes its slab
        # kernel where they would be at most 75% used, and every plan gives the same bits); 288^3;
        # the chunk alone. Per shape: the GPU time between events (best of 5) and whether the
        # block's outputs equal the whole array's bit for bit (the block cut from the array's
        # interior, its halo at least the filter's).
        c, d = args.chunk, int(4 * args.sigma + 0.5)
        h = c + 2 * d
        rows = {}
        def up(n, multiple):
            return -(-n // multiple) * multiple

        for extents in [(h, h, h), (h, h, up(h, 32)), (h, h, up(h, 64)), (h, h, up(h, 128)),
                        (up(h, 32),) * 3, (c, c, c)]:
            before = [max(d, (e - c) // 2) for e in extents]
            block = cp.ascontiguousarray(whole[tuple(slice(c - b, c - b + e)
                                                     for b, e in zip(before, extents))])
            gpu = _one_thread(cp, lambda: ndimage_gaussian(block, args.sigma), 5)["gpu_s"]
            line = f"{gpu * 1e3:.4f} ms"
            if all(e - b - c >= d for b, e in zip(before, extents)):
                kept = ndimage_gaussian(block, args.sigma)[
                    tuple(slice(b, b + c) for b in before)]
                same = bool(cp.array_equal(kept, reference[c:2 * c, c:2 * c, c:2 * c]))
                line += f", bit-identical {same}"
            rows["x".join(map(str, extents))] = line
        return rows

    guarded("filter_one_block", filter_by_shape)
    persisted = {}
    from ndconv.dask import _gpu_halo

    for variant, module, name, replacement in [
            ("ndconv.dask", None, None, None),
            ("pieces, not the kernel", _gpu_halo, "fits_kernel", lambda layout, blocks: False)]:
        real = getattr(module, name) if module is not None else None
        if module is not None:
            setattr(module, name, replacement)
        try:
            times = {}
            for scheduler, options in _SCHEDULERS:
                times[scheduler] = timed(make, **options)[0]
            y = make().persist()
            same = bool(cp.array_equal(y.compute(), reference))
            del y
            best = min(times, key=times.get)
            line = (f"best {times[best]:.4f} s ({best}); " +
                    ", ".join(f"{k} {v:.4f}" for k, v in times.items()) +
                    f"; bit-identical {same}")
        except Exception as error:
            line = f"failed: {type(error).__name__}: {error}"
        finally:
            if module is not None:
                setattr(module, name, real)
        persisted[variant] = line
    out["persisted"] = persisted
    return out


_SCHEDULERS = [("threads", {}), ("threads_2", {"num_workers": 2}),
               ("threads_4", {"num_workers": 4}), ("sync", {"scheduler": "sync"})]


def _one_thread(cp, run, repeats):
    """Best of the repeats of `run` on this thread: the host's time to issue it, the GPU's time
    between events around it, and the wall time until the GPU finished (seconds)."""
    best = None
    for _ in range(repeats + 1):  # the first also compiles and fills the memory pool
        cp.cuda.Device().synchronize()
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        start = time.perf_counter()
        begin.record()
        kept = run()
        end.record()
        issued = time.perf_counter() - start
        end.synchronize()
        wall = time.perf_counter() - start
        del kept
        gpu = cp.cuda.get_elapsed_time(begin, end) / 1e3
        if best is None or wall < best["wall_s"]:
            best = {"host_s": round(issued, 5), "gpu_s": round(gpu, 5), "wall_s": round(wall, 5)}
    return best


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

        def on_cluster(name, devices, files_per_task=None, persistent=True):
            """Seconds of the cohort on a running cluster: the first cohort (each worker's kept
            command line started by its first task) and a second one (kept from the first)."""
            seconds = []
            with LocalCUDACluster(CUDA_VISIBLE_DEVICES=devices, threads_per_worker=1,
                                  dashboard_address=None) as cluster, Client(cluster) as client:
                client.wait_for_workers(len(devices.split(",")))
                for round_ in ("", "-again"):
                    (root / (name + round_)).mkdir()
                    start = time.perf_counter()
                    done = nd.filter_files(command + ["--device", "cuda"], inputs,
                                           root / (name + round_), client=client, cli=args.cli,
                                           files_per_task=files_per_task, persistent=persistent)
                    seconds.append(time.perf_counter() - start)
                    if not done.ok:
                        raise SystemExit(done.summary())
            return [round(s, 2) for s in seconds]

        # Each: [first cohort, second cohort] on the running cluster.
        result["cluster_one_worker_s"] = on_cluster("dask1", str(gpus[0]))
        result["cluster_all_workers_s"] = on_cluster("daskN", args.gpus)
        result["cluster_speedup"] = [round(a / b, 3) for a, b in
                                     zip(result["cluster_one_worker_s"],
                                         result["cluster_all_workers_s"])]
        # A command line per task (persistent=False), and one per file.
        result["cluster_one_worker_process_per_task_s"] = on_cluster("dask1p", str(gpus[0]),
                                                                     None, False)
        result["cluster_all_workers_process_per_task_s"] = on_cluster("daskNp", args.gpus,
                                                                      None, False)
        result["cluster_one_worker_file_per_task_s"] = on_cluster("dask1f", str(gpus[0]), 1, False)
        result["cluster_all_workers_file_per_task_s"] = on_cluster("daskNf", args.gpus, 1, False)
        others = [p.name for p in root.iterdir() if p.name.startswith(("batchN", "dask"))]
        result["outputs_byte_identical"] = all(
            _same_outputs(root / "batch1", root / other) for other in others)
    return result


def adaptive(args):
    import dask
    import dask.array as da

    import ndconv
    import ndconv.dask as nd
    from ndconv import _engine

    dask.config.set(scheduler="threads")
    shape = tuple(int(s) for s in args.shape.split("x"))
    series = (np.random.default_rng(1).random(shape) * 255).astype(np.uint8)
    options = {"preset": "echo", "device": args.device}

    def best(call):
        times, out = [], None
        for _ in range(args.repeats):
            start = time.perf_counter()
            out = call()
            times.append(time.perf_counter() - start)
        return min(times), out

    ndconv.adaptive_filter(series, **options)  # CUDA's start-up and the filter's design
    whole_s, whole = best(lambda: ndconv.adaptive_filter(series, **options))
    scales_s, _ = best(lambda: _engine.adaptive_scales(series, preset="echo", device=args.device))
    result = {"series": args.shape, "whole_call_s": round(whole_s, 4),
              "scales_alone_s": round(scales_s, 4), "blockwise": {}}
    for pieces in (int(c) for c in args.chunks.split(",")):
        chunks = list(shape)
        chunks[1] = -(-shape[1] // pieces)
        x = da.from_array(series, chunks=tuple(chunks))
        seconds, out = best(lambda: nd.adaptive_filter(x, **options).compute())
        result["blockwise"][f"{pieces} chunks along z"] = {
            "s": round(seconds, 4), "x_whole_call": round(seconds / whole_s, 3),
            "bit_identical": bool(np.array_equal(out, whole))}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    a = sub.add_parser("arrays")
    a.add_argument("--size", type=int, default=1024)
    a.add_argument("--chunk", type=int, default=256)
    a.add_argument("--sigma", type=float, default=2.0)
    a.add_argument("--repeats", type=int, default=3)
    a.add_argument("--breakdown", action="store_true",
                   help="also each part of ndconv.dask's time alone, and every variant")
    c = sub.add_parser("cohort")
    c.add_argument("--cli", required=True)
    c.add_argument("--files", type=int, default=8)
    c.add_argument("--shape", default="20x160x160x160", help="slowest axis first")
    c.add_argument("--gpus", default="0,1")
    c.add_argument("--work", default=None, help="where the files go (default: the temp folder)")
    d = sub.add_parser("adaptive")
    d.add_argument("--shape", default="20x160x160x160", help="slowest axis first")
    d.add_argument("--chunks", default="1,2,4", help="numbers of chunks along z")
    d.add_argument("--repeats", type=int, default=3)
    d.add_argument("--device", default="cuda")
    args = parser.parse_args()
    result = {"arrays": arrays, "cohort": cohort, "adaptive": adaptive}[args.what](args)
    # One line per entry (a section's entries indented), so that a log's tail holds all of it.
    for key, value in result.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for name, entry in value.items():
                if isinstance(entry, dict) and name in ("persisted", "filter_one_block"):
                    print(f"  {name}:")
                    for variant, line in entry.items():
                        print(f"    {variant}: {line}")
                else:
                    print(f"  {name}: {json.dumps(entry)}")
        else:
            print(f"{key}: {json.dumps(value)}")


if __name__ == "__main__":
    main()
