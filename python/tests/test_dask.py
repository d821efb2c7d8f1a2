"""ndconv.dask: every filter block by block equal to the whole array's, bit for bit (every mode
the engine has, 2D-4D, chunks smaller than the halo, uneven last chunks), a zarr volume larger
than a worker's memory streamed through a LocalCluster, and cohorts of files through the command
line with its safety rules, a worker killed half-way."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import ndconv  # noqa: E402
import ndconv.dask as nd  # noqa: E402
from ndconv import ndimage  # noqa: E402
from ndconv.dask import _gpu_halo  # noqa: E402

from conftest import gpu_libraries, random_array  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


# Every scipy mode, constant with a zero and a non-zero cval.
MODES = [("reflect", 0.0), ("nearest", 0.0), ("mirror", 0.0), ("wrap", 0.0), ("constant", 0.0),
         ("constant", 2.5)]


def _case(name, *args, **kwargs):
    _case.count += 1
    return pytest.param(name, args, kwargs, id=f"{name}-{_case.count}")


_case.count = 0


W3 = np.arange(3 * 4 * 2, dtype=np.float32).reshape(3, 4, 2) / 7 - 1

FILTERS = [
    _case("gaussian_filter", 2.0),
    _case("gaussian_filter", (1.0, 3.0, 0.5), order=(0, 1, 2)),
    _case("gaussian_filter", 1.5, radius=2, axes=(0, 2)),
    _case("gaussian_filter", 2.0, spacing=(0.5, 1.0, 2.0), truncate=3.0),
    _case("gaussian_filter1d", 2.5, axis=1, order=1),
    _case("uniform_filter", (4, 3, 5), origin=(1, 0, -2)),
    _case("uniform_filter1d", 6, axis=0, origin=-3),
    _case("median_filter", size=(3, 5, 3)),
    _case("median_filter", footprint=np.ones((5, 3), bool), axes=(0, 2)),
    _case("correlate", W3, origin=(1, -1, 0)),
    _case("convolve", W3, origin=(0, 1, -1)),
    _case("correlate1d", [1.0, -2.0, 0.5, 3.0], axis=2, origin=1),
    _case("convolve1d", [1.0, -2.0, 0.5, 3.0], axis=0, origin=-1),
    _case("sobel", axis=1),
    _case("prewitt", axis=0),
    _case("laplace"),
    _case("gaussian_laplace", (1.0, 2.0, 1.5)),
    _case("gaussian_gradient_magnitude", 1.5, truncate=2.5),
]


def _chunked(array, chunks):
    return da.from_array(array, chunks=chunks)


@pytest.fixture(params=["overlap", "neighbours"])
def graph(request, monkeypatch):
    # Both halo graphs on host chunks: dask's overlap (host chunks' own), and the one task per
    # block that CuPy chunks take (_halo._neighbour_graph), so CI checks it without a GPU.
    monkeypatch.setattr(nd._halo, "_on_gpu", lambda x: request.param == "neighbours")
    return request.param


@pytest.mark.parametrize("mode,cval", MODES, ids=[f"{m}{c or ''}" for m, c in MODES])
@pytest.mark.parametrize("name,args,kwargs", FILTERS)
def test_filter_equals_whole_array(rng, name, args, kwargs, mode, cval, graph):
    # 3D, chunks of 7-9 voxels (smaller than the larger halos), uneven last chunks.
    array = random_array(rng, (23, 19, 17), np.float32)
    x = _chunked(array, (9, 7, 8))
    whole = getattr(ndimage, name)(array, *args, mode=mode, cval=cval, threads=1, **kwargs)
    lazy = getattr(nd, name)(x, *args, mode=mode, cval=cval, threads=1, **kwargs)
    assert isinstance(lazy, da.Array)
    result = lazy.compute(scheduler="threads")
    assert result.dtype == whole.dtype
    np.testing.assert_array_equal(result, whole)


@pytest.mark.parametrize("shape,chunks", [((41, 37), (9, 4)), ((11, 9, 8, 10), (4, 3, 5, 3)),
                                          ((13, 15, 6, 7), (13, 4, 2, 3))])
@pytest.mark.parametrize("name,args,kwargs", [
    _case("gaussian_filter", 1.5),
    _case("uniform_filter", 3),
    _case("median_filter", size=3),
    _case("gaussian_gradient_magnitude", 1.0),
    _case("sobel", axis=0),
])
def test_2d_and_4d(rng, shape, chunks, name, args, kwargs, graph):
    array = random_array(rng, shape, np.float32)
    whole = getattr(ndimage, name)(array, *args, mode="nearest", threads=1, **kwargs)
    lazy = getattr(nd, name)(_chunked(array, chunks), *args, mode="nearest", threads=1, **kwargs)
    np.testing.assert_array_equal(lazy.compute(scheduler="threads"), whole)


@pytest.mark.parametrize("dtype,output", [(np.int16, None), (np.uint8, np.float32),
                                          (np.float64, np.float32)])
def test_dtypes(rng, dtype, output):
    array = random_array(rng, (20, 18, 9), dtype)
    whole = ndimage.gaussian_filter(array, 1.2, output=output, mode="mirror", threads=1)
    lazy = nd.gaussian_filter(_chunked(array, (6, 7, 9)), 1.2, output=output, mode="mirror",
                              threads=1)
    assert lazy.dtype == whole.dtype
    np.testing.assert_array_equal(lazy.compute(), whole)


def test_mixed_wrap_axes_and_halo_longer_than_axis(rng, graph):
    # wrap along one axis, mirror along the other: gaussian_laplace's terms take each axis's mode
    # along every axis, so no dask boundary fits and those axes stay whole; sigma 3 along an axis
    # of 9 voxels reads farther than the axis is long.
    array = random_array(rng, (30, 9, 14), np.float32)
    x = _chunked(array, (8, 4, 5))
    modes = ["wrap", "mirror", "nearest"]
    whole = ndimage.gaussian_laplace(array, (1.0, 3.0, 1.0), mode=modes, threads=1)
    lazy = nd.gaussian_laplace(x, (1.0, 3.0, 1.0), mode=modes, threads=1)
    np.testing.assert_array_equal(lazy.compute(), whole)
    whole = ndimage.gaussian_filter(array, (2.0, 3.0, 1.0), mode=modes, threads=1)
    lazy = nd.gaussian_filter(x, (2.0, 3.0, 1.0), mode=modes, threads=1)
    np.testing.assert_array_equal(lazy.compute(), whole)


@pytest.mark.parametrize("name", ["correlate", "convolve"])
@pytest.mark.parametrize("axes,shape,origin", [((2, 0), (3, 4), (1, -1)), ((1,), (6,), -3),
                                               ((0, 2, 1), (3, 4, 5), (-1, 1, 0))])
def test_weights_on_axes_in_any_order(rng, name, axes, shape, origin):
    array = random_array(rng, (23, 19, 17), np.float32)
    weights = rng.standard_normal(shape)
    whole = getattr(ndimage, name)(array, weights, origin=origin, axes=axes, mode="wrap")
    lazy = getattr(nd, name)(_chunked(array, (5, 6, 4)), weights, origin=origin, axes=axes,
                             mode="wrap")
    np.testing.assert_array_equal(lazy.compute(), whole)
    if len(axes) < 2:
        return
    whole = ndimage.median_filter(array, size=(3, 5), axes=axes[:2], mode="mirror")
    lazy = nd.median_filter(_chunked(array, (5, 6, 4)), size=(3, 5), axes=axes[:2], mode="mirror")
    np.testing.assert_array_equal(lazy.compute(), whole)


def test_every_ndimage_filter_has_a_dask_function():
    assert set(ndimage.__all__) <= set(nd.__all__)


def test_halo_rules():
    assert nd.halo("gaussian_filter", 3, 2.0) == (8, 8, 8)  # int(4 * 2 + 0.5)
    assert nd.halo("gaussian_filter", 3, (1.0, 2.0, 0.0), truncate=3.0) == (3, 6, 0)
    assert nd.halo("gaussian_filter", 2, 5.0, radius=3) == (3, 3)
    assert nd.halo("gaussian_filter", 2, 2.0, spacing=(0.5, 2.0)) == (16, 4)
    assert nd.halo("uniform_filter", 2, (5, 4), origin=(1, -2)) == (3, 3)
    assert nd.halo("median_filter", 3, size=(3, 5, 1)) == (1, 2, 0)
    assert nd.halo("correlate", 3, np.ones((3, 4, 5))) == (1, 2, 2)
    assert nd.halo("correlate", 3, np.ones((3, 4)), origin=(1, 0), axes=(2, 0)) == (2, 0, 3)
    assert nd.halo("convolve", 1, np.ones(4), origin=1) == (3,)
    assert nd.halo("sobel", 4) == (1, 1, 1, 1)
    assert nd.halo("laplace", 3, axes=(0, 2)) == (1, 0, 1)
    assert nd.halo("gaussian_laplace", 2, 1.0) == (4, 4)
    with pytest.raises(ValueError, match="unknown filter"):
        nd.halo("rank_filter", 2)


def test_bad_arguments_fail_when_the_graph_is_built(rng):
    x = _chunked(random_array(rng, (10, 10), np.float32), 5)
    with pytest.raises(ValueError):
        nd.gaussian_filter(x, -1.0)
    with pytest.raises(ValueError):
        nd.uniform_filter(x, 3, mode="sideways")
    with pytest.raises(TypeError, match="dtype"):
        nd.uniform_filter(x, 3, output=np.empty((10, 10), np.float32))
    with pytest.raises(TypeError, match="dask arrays"):
        nd.uniform_filter(np.zeros((10, 10), np.float32), 3)


def test_filter_bank(rng, graph):
    array = random_array(rng, (21, 17, 12), np.float32)
    filters = rng.standard_normal((3, 5, 3, 7)).astype(np.float32)
    whole = ndconv.filter_bank(array, filters, mode="mirror", threads=1)
    lazy = nd.filter_bank(_chunked(array, (6, 5, 4)), filters, mode="mirror", threads=1)
    assert len(lazy) == 3
    for w, lz in zip(whole, lazy):
        np.testing.assert_array_equal(lz.compute(), w)


def test_adaptive_filter_frames_and_coarse_orientation(rng):
    # Frames: each chunk one frame, split in blocks smaller than the support within it; the coarse
    # orientation estimate keeps each frame whole.
    series = random_array(rng, (3, 12, 14, 10), np.float32)
    x = _chunked(series, (1, 5, 5, 5))
    frames = nd.adaptive_filter(x, frames=True, threads=1)
    assert frames.chunks[0] == (1, 1, 1)  # the frames spread over the workers
    np.testing.assert_array_equal(frames.compute(),
                                  ndconv.adaptive_filter(series, frames=True, threads=1))
    coarse = nd.adaptive_filter(x, frames=True, coarse_orientation=True, threads=1)
    assert coarse.chunks[1:] == ((12,), (14,), (10,))
    np.testing.assert_array_equal(
        coarse.compute(),
        ndconv.adaptive_filter(series, frames=True, coarse_orientation=True, threads=1))


def test_adaptive_scales_of_block_interiors_make_the_whole_images(rng):
    # The engine's largest magnitude over a block's own voxels, the block read with the structure
    # tensor's halo: their largest is the whole image's, and so is the filter with that scale.
    volume = random_array(rng, (21, 18, 16), np.float32)
    depth, _ = ndconv._ndconv.adaptive_reach("default", {})
    whole, report = ndconv.adaptive_filter(volume, threads=1, return_report=True)
    (scale,) = ndconv.adaptive_scales(volume, threads=1)
    assert report["normalisation_scales"] == [scale] and scale > 0
    local = []
    for z0, z1 in [(0, 8), (8, 15), (15, 21)]:
        lo, hi = max(0, z0 - depth), min(21, z1 + depth)
        local += ndconv.adaptive_scales(volume[lo:hi], threads=1,
                                        interior=(slice(z0 - lo, z1 - lo), slice(None), slice(None)))
    assert max(local) == scale and min(local) < scale
    np.testing.assert_array_equal(ndconv.adaptive_filter(volume, threads=1, scale=scale), whole)
    assert not np.array_equal(ndconv.adaptive_filter(volume, threads=1, scale=min(local)), whole)


@pytest.mark.parametrize("shape,chunks,kwargs", [
    ((23, 19, 17), (5, 7, 6), {}),
    ((23, 19, 17), (9, 4, 8), {"preset": "echo", "mode": "reflect"}),
    ((17, 15, 13), (6, 5, 4), {"mode": "wrap", "relaxation": 0.0}),
    ((5, 9, 10, 8), (2, 4, 5, 3), {"quadrature_size": 5, "reconstruction_size": 7}),
])
def test_adaptive_filter_blockwise_equals_whole_array(client, rng, shape, chunks, kwargs):
    # Chunks smaller than the support (6 to 9 voxels) and uneven last chunks, on 2 worker
    # processes: the two passes (the scale, then the filter) give the whole array's bits.
    array = random_array(rng, shape, np.float32)
    lazy = nd.adaptive_filter(_chunked(array, chunks), threads=1, **kwargs)
    assert lazy.npartitions > 1
    np.testing.assert_array_equal(lazy.compute(), ndconv.adaptive_filter(array, threads=1,
                                                                         **kwargs))


@pytest.mark.parametrize("shape,chunks,frames", [((13, 11, 9), (13, 11, 9), False),
                                                  ((3, 8, 9, 7), (1, 8, 9, 7), True)])
def test_adaptive_filter_of_one_chunk_is_one_pass(rng, shape, chunks, frames):
    # An image (each frame) in one chunk: filtered as a whole, without the scale pass.
    array = random_array(rng, shape, np.float32)
    lazy = nd.adaptive_filter(_chunked(array, chunks), frames=frames, threads=1)
    assert not any("max" in str(key) for key in dict(lazy.__dask_graph__()))  # the scales' reduction
    np.testing.assert_array_equal(lazy.compute(),
                                  ndconv.adaptive_filter(array, frames=frames, threads=1))
    split = nd.adaptive_filter(_chunked(array, tuple(max(1, c // 2) for c in chunks)),
                               frames=frames, threads=1)
    assert any("max" in str(key) for key in dict(split.__dask_graph__()))


@pytest.mark.skipif("cupy" not in gpu_libraries(), reason="needs CuPy and a usable GPU")
def test_adaptive_filter_cupy_chunks(rng):
    # The engine's GPU stages (the scale reduced by atomicMax over each block's interior), blocks
    # against the whole array on the GPU: CuPy chunks, and host chunks of a true-4D series.
    import cupy

    array = random_array(rng, (40, 37, 35), np.float32)
    x = da.from_array(cupy.asarray(array), chunks=(16, 13, 20), asarray=False)
    lazy = nd.adaptive_filter(x, device="cuda")
    result = lazy.compute(scheduler="threads")
    assert isinstance(result, cupy.ndarray)
    whole, report = ndconv.adaptive_filter(array, device="cuda", return_report=True)
    assert report["backend"] == "cuda", report
    np.testing.assert_array_equal(result.get(), whole)
    series = random_array(rng, (6, 12, 14, 10), np.float32)
    lazy = nd.adaptive_filter(_chunked(series, (3, 5, 6, 4)), device="cuda", preset="echo")
    np.testing.assert_array_equal(lazy.compute(scheduler="threads"),
                                  ndconv.adaptive_filter(series, device="cuda", preset="echo"))


def _halo_tasks(x, depth, mode):
    """The tasks of the one-task-per-block halo graph of `x` (the identity as the filter): per
    output block its task's arguments and its input blocks."""
    y = nd._halo.overlap_filter(x, lambda block: block, [nd._halo.Reach(depth, {mode})] * x.ndim,
                                x.dtype)
    for task in dict(y.dask.layers[y.name]).values():
        yield task[0].keywords, [x.blocks[key[1:]].compute() for key in task[1:]]


def _gather_like_the_kernel(shape, layout, blocks):
    """A halo'd block as _gpu_halo's kernel copies it together (its segment rule per axis, its
    radix-3 combinations of segments), in numpy."""
    segments, sources = layout
    per_axis = []
    for extent, (first, second, *deltas) in zip(shape, _gpu_halo.segment_scalars(segments)):
        rows = np.arange(extent)
        segment = np.where(rows < first, 0, np.where(rows < second, 1, 2))
        per_axis.append((segment, rows + np.asarray(deltas)[segment]))
    halo = np.full(shape, np.nan, blocks[0].dtype) if blocks[0].dtype.kind == "f" else \
        np.zeros(shape, blocks[0].dtype)
    for combination in np.ndindex(*(3,) * len(shape)):
        rows = [np.flatnonzero(segment == g) for (segment, _), g in zip(per_axis, combination)]
        if any(r.size == 0 for r in rows):
            continue
        source = blocks[sources[np.ravel_multi_index(combination, (3,) * len(shape))]]
        halo[np.ix_(*rows)] = source[np.ix_(*(read[r] for (_, read), r in zip(per_axis, rows)))]
    return halo


@pytest.mark.parametrize("shape,chunks,depth,mode", [
    ((23, 19, 17), (9, 7, 8), 3, "reflect"), ((23, 19, 17), (9, 7, 8), 3, "wrap"),
    ((41, 37), (9, 4), 2, "nearest"), ((11, 9, 8, 10), (4, 3, 5, 3), 2, "mirror"),
    ((11, 9, 8, 10), (4, 3, 5, 3), 3, "wrap"), ((30,), (7,), 5, "wrap"),
    ((23, 19, 17), (9, 7, 8), 8, "reflect")])
def test_gather_kernel_layout_equals_the_pieces(rng, shape, chunks, depth, mode, monkeypatch):
    # The CuPy halo graph's kernel reads each halo'd block through per-axis segment tables; here
    # its rule, in numpy, against the slice-by-slice copies, for every block. Chunks smaller than
    # the halo (more than 3 pieces along an axis) have no layout and take the pieces.
    monkeypatch.setattr(nd._halo, "_on_gpu", lambda x: True)
    x = _chunked(random_array(rng, shape, np.float32), chunks)
    laid_out = 0
    for task, blocks in _halo_tasks(x, depth, mode):
        expected = np.full(task["shape"], np.nan, np.float32)
        _gpu_halo.copy_pieces(expected, task["pieces"], blocks)
        layout = task["layout"]
        if depth > min(chunks):
            assert layout is None or all(len(axis) <= 3 for axis in layout[0])
        if layout is not None:
            laid_out += 1
            np.testing.assert_array_equal(_gather_like_the_kernel(task["shape"], layout, blocks),
                                          expected)
    assert laid_out > 0 if depth <= min(chunks) else True


@pytest.mark.parametrize("whole", [270, 300, 256])
def test_3d_blocks_read_only_their_halo(rng, whole, monkeypatch):
    # Every GPU plan of a separable filter gives the same bits (the engine's slab kernel and its
    # column passes among them: separable_bits_gpu_test.cpp), so a CuPy block is filtered with its
    # halo and nothing more, whichever plan its extents get, and the outputs kept are the whole
    # array's (here with numpy blocks through the CuPy graph).
    monkeypatch.setattr(nd._halo, "_on_gpu", lambda x: True)
    array = random_array(rng, (6, 5, whole), np.float32)
    x = _chunked(array, (4, 5, 110))
    for mode in ("reflect", "wrap", "constant"):
        expected = ndimage.gaussian_filter(array, 1.5, mode=mode, cval=2.5, threads=1)
        lazy = nd.gaussian_filter(x, 1.5, mode=mode, cval=2.5, threads=1)
        np.testing.assert_array_equal(lazy.compute(scheduler="threads"), expected)
        lengths = sorted(task["shape"][-1] for task, _ in _halo_tasks(x, 6, mode))
        bounds = np.concatenate([[0], np.cumsum(x.chunks[-1])])
        # (_halo_tasks' Reach takes the mode's name as given: 'wrap' reads as clipped here.)
        read = [min(whole, hi + 6) - max(0, lo - 6) for lo, hi in zip(bounds[:-1], bounds[1:])]
        assert set(lengths) == set(read), (lengths, read)


@pytest.mark.skipif("cupy" not in gpu_libraries(), reason="needs CuPy and a usable GPU")
def test_cupy_chunks(rng):
    import cupy

    array = random_array(rng, (40, 33, 29), np.float32)
    x = da.from_array(cupy.asarray(array), chunks=(16, 11, 10), asarray=False)
    lazy = nd.gaussian_filter(x, 2.0, mode="nearest")
    result = lazy.compute(scheduler="threads")
    assert isinstance(result, cupy.ndarray)
    np.testing.assert_array_equal(result.get(),
                                  ndimage.gaussian_filter(cupy.asarray(array), 2.0,
                                                          mode="nearest").get())
    # The halo'd blocks themselves, bit for bit the pieces', for 1-byte to 8-byte elements, 1D to
    # 4D, wrap, and chunks that are strided views of one array.
    for shape, chunks, dtype, mode in [((37, 30, 26), (16, 11, 9), np.uint16, "wrap"),
                                       ((13, 12, 10, 9), (5, 4, 6, 3), np.uint8, "reflect"),
                                       ((61, 45), (20, 16), np.float64, "nearest"),
                                       ((50,), (17,), np.int32, "wrap")]:
        host = random_array(rng, shape, dtype)
        x = da.from_array(cupy.asarray(host), chunks=chunks, asarray=False)
        same = nd._halo.overlap_filter(x, lambda block: block,
                                       [nd._halo.Reach(2, {mode})] * len(shape), dtype)
        np.testing.assert_array_equal(same.compute(scheduler="threads").get(), host)
        for task, blocks in _halo_tasks(x, 3, mode):
            if task["layout"] is None:
                continue
            expected = cupy.zeros(task["shape"], dtype)
            _gpu_halo.copy_pieces(expected, task["pieces"], blocks)
            gathered = cupy.zeros(task["shape"], dtype)
            _gpu_halo.gather(cupy, gathered, task["layout"], blocks)
            np.testing.assert_array_equal(gathered.get(), expected.get())


# ---- on a cluster --------------------------------------------------------------------------------

# A worker holds about 110-130 MiB once dask and ndconv are imported; it pauses at 80% of its
# limit and its nanny ends it at 95%.
WORKER_MEMORY = 256 * 2**20


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit=WORKER_MEMORY, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


# The cohorts' cluster: no memory limit, since a worker's own size differs between machines (with
# CUDA's libraries loaded it can start above the limit above, and its nanny then restarts it
# until the tasks fail).
@pytest.fixture(scope="module")
def cohort_client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit=0, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_zarr_volume_larger_than_a_worker(client, tmp_path):
    # A volume 4x a worker's memory limit (about 9x what the worker has left beside the
    # interpreter), read from zarr and written to zarr block by block; then compared slab by slab
    # with the filter of a slab with its halo.
    zarr = pytest.importorskip("zarr")
    shape, chunks = (64, 2048, 2048), (8, 256, 512)
    assert np.prod(shape) * 4 == 4 * WORKER_MEMORY
    source = da.random.default_rng(7).standard_normal(shape, dtype=np.float32, chunks=chunks)
    source.to_zarr(str(tmp_path / "in.zarr"), compressors=None)
    workers = set(client.scheduler_info()["workers"])
    x = da.from_zarr(str(tmp_path / "in.zarr"))
    nd.gaussian_filter(x, 1.0, mode="nearest", threads=1).to_zarr(str(tmp_path / "out.zarr"),
                                                                  compressors=None)
    assert set(client.scheduler_info()["workers"]) == workers  # none died and came back
    stored_in = zarr.open_array(str(tmp_path / "in.zarr"), mode="r")
    stored_out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    for z0, y0 in [(0, 0), (8, 256), (24, 768), (40, 1280), (56, 1792)]:
        lo, hi = max(z0 - 4, 0), min(z0 + 12, shape[0])
        ylo, yhi = max(y0 - 4, 0), min(y0 + 260, shape[1])
        slab = ndimage.gaussian_filter(stored_in[lo:hi, ylo:yhi], 1.0, mode="nearest")
        np.testing.assert_array_equal(stored_out[z0:z0 + 8, y0:y0 + 256],
                                      slab[z0 - lo:z0 - lo + 8, y0 - ylo:y0 - ylo + 256])


# ---- cohorts -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli():
    built = REPO / "build" / "src" / "cli" / "ndconv"
    found = str(built) if built.is_file() else shutil.which("ndconv")
    if found is None:
        pytest.skip("no ndconv command line (build/src/cli/ndconv or on the PATH)")
    if not ndconv._ndconv.has_io:
        pytest.skip("this build of the package has no file I/O")
    return found


def _cohort(tmp_path, rng, count):
    folder = tmp_path / "in"
    folder.mkdir()
    inputs = []
    for i in range(count):
        path = folder / f"in_{i:03d}.nii.gz"
        ndconv.write(path, random_array(rng, (9, 11, 8 + i % 3), np.int16), spacing=(2.0, 1, 1))
        inputs.append(str(path))
    return inputs


def _cli_batch(cli, subcommand, inputs, output, options):
    subprocess.run([cli, subcommand, *inputs, "-o", output, *options], check=True,
                   capture_output=True)


def _same_files(a: Path, b: Path):
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


# Between a kept server (ndconv serve) and its worker: forwards each answer, except that the
# answer of the task that wrote in_025 kills the worker once instead (argv: marker, worker pid).
_KILL_ON_IN_025 = """
import os, signal, sys, time
marker, worker = sys.argv[1], int(sys.argv[2])
source, sink = sys.stdin.buffer, sys.stdout.buffer
while True:
    header = source.readline()
    if not header:
        break
    answer = source.read(int(header.split()[2]))
    if b"in_025" in answer:
        try:
            os.mkdir(marker)
            os.kill(worker, signal.SIGKILL)
            time.sleep(10)
            sys.exit(1)
        except FileExistsError:
            pass
    sink.write(header + answer)
    sink.flush()
"""


@pytest.mark.parametrize("persistent", [True, False])
def test_cohort_equals_the_command_line_with_a_worker_killed(cohort_client, cli, tmp_path, rng,
                                                            persistent):
    inputs = _cohort(tmp_path, rng, 50)
    (tmp_path / "ref").mkdir()
    (tmp_path / "out").mkdir()
    _cli_batch(cli, "smooth", inputs, str(tmp_path / "ref"), ["--sigma", "1.5"])
    # The command line the tasks run: the real one, except that the task of in_025 kills its
    # worker once, after the command line wrote its outputs into the task's staging folder (a
    # kept server's answer for that task never reaches the worker).
    marker = tmp_path / "killed"
    killer = tmp_path / "kill_on_in_025.py"
    killer.write_text(_KILL_ON_IN_025)
    wrapper = tmp_path / "ndconv-killing-once"
    wrapper.write_text(f"""#!/bin/sh
if [ "$*" = serve ]; then
  worker=$PPID
  "{cli}" serve | "{sys.executable}" "{killer}" "{marker}" $worker
  exit $?
fi
"{cli}" "$@" || exit $?
case "$*" in *in_025*)
  if mkdir "{marker}" 2>/dev/null; then kill -9 $PPID; sleep 10; exit 1; fi ;;
esac
""")
    wrapper.chmod(0o755)
    result = nd.filter_files(["smooth", "--sigma", "1.5"], inputs, str(tmp_path / "out") + "/",
                             client=cohort_client, cli=wrapper, persistent=persistent)
    assert marker.is_dir()  # the worker was killed
    assert result.ok, result.failed
    assert len(result.written) == 50
    _same_files(tmp_path / "out", tmp_path / "ref")  # no staging folder left either
    assert result.summary() == "50 inputs written"


def _serve_request(args) -> bytes:
    parts = [f"{len(args)}\n".encode()]
    for arg in args:
        data = os.fsencode(str(arg))
        parts += [f"{len(data)}\n".encode(), data, b"\n"]
    return b"".join(parts)


def _serve_answers(stdout: bytes) -> list:
    answers = []
    while stdout:
        header, stdout = stdout.split(b"\n", 1)
        name, code, length = header.split()
        assert name == b"ndconv-serve"
        answers.append((int(code), stdout[:int(length)].decode()))
        stdout = stdout[int(length):]
    return answers


def test_serve_runs_each_command_as_the_command_line(cli, tmp_path, rng):
    inputs = _cohort(tmp_path, rng, 3)
    (tmp_path / "ref").mkdir()
    (tmp_path / "served").mkdir()
    _cli_batch(cli, "smooth", inputs, str(tmp_path / "ref"), ["--sigma", "1.5"])
    served = tmp_path / "served"
    requests = [
        ["smooth", *inputs[:2], "-o", f"{served}/", "--sigma", "1.5"],  # a batch
        ["smooth", inputs[2], served / Path(inputs[2]).name, "--sigma", "1.5"],
        ["smooth", inputs[0], served / "x.nii.gz"],  # no sigma: refused
        ["smooth", inputs[0], served / Path(inputs[0]).name, "--sigma", "1.5"],  # exists
        ["serve"],
        ["smooth", tmp_path / "in" / "missing.nii.gz", served / "y.nii.gz", "--sigma", "1"],
    ]
    done = subprocess.run([cli, "serve"], input=b"".join(map(_serve_request, requests)),
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = _serve_answers(done.stdout)
    assert [code for code, _ in answers] == [0, 0, 2, 2, 2, 1], answers
    assert "wrote" in answers[0][1] and "--sigma" in answers[2][1]
    assert "exists" in answers[3][1] and "another server" in answers[4][1]
    assert "missing.nii.gz" in answers[5][1]
    _same_files(served, tmp_path / "ref")
    # A malformed request ends the server with exit code 2 and one line.
    for bad in (b"x\n", b"1\n5\nsmooth\n", b"2\n6\nsmooth\n"):
        done = subprocess.run([cli, "serve"], input=bad, capture_output=True, timeout=60)
        assert done.returncode == 2 and done.stdout == b"", (bad, done)
        assert done.stderr.decode().count("\n") == 1 and "serve:" in done.stderr.decode()


# Files per task: the default (2 tasks per worker thread: 2 files a task here), one command line
# per file, and 3 a task so that a task's batch holds a written input and two failed ones; MetaImage
# outputs bring their data files.
@pytest.mark.parametrize("per_task,extension", [(None, ".nrrd"), (1, ".nrrd"), (3, ".mhd")])
def test_cohort_safety_and_failures_named(cohort_client, cli, tmp_path, rng, per_task,
                                          extension):
    inputs = _cohort(tmp_path, rng, 4)
    broken = tmp_path / "in" / "broken.nii.gz"
    broken.write_bytes(b"\x1f\x8b not really gzip")
    missing = str(tmp_path / "in" / "missing.nii.gz")
    template = str(tmp_path / "out" / f"{{stem}}_m{extension}")
    (tmp_path / "out").mkdir()
    (tmp_path / "ref").mkdir()
    _cli_batch(cli, "median", inputs, str(tmp_path / "ref" / f"{{stem}}_m{extension}"),
               ["--radius", "1"])

    result = nd.filter_files(["median", "--radius", "1"], [*inputs, str(broken), missing],
                             template, client=cohort_client, cli=cli, files_per_task=per_task)
    assert [str(t) for t in result.written] == [str(tmp_path / "out" / f"in_{i:03d}_m{extension}")
                                                for i in range(4)]
    assert "broken.nii.gz" in result.failed[0][1] and "missing.nii.gz" in result.failed[1][1]
    assert [source for source, _ in result.failed] == [str(broken), missing]
    assert all("exit 1" in reason for _, reason in result.failed)
    assert result.summary() == "2 of 6 inputs failed (named above); the others were written"
    _same_files(tmp_path / "out", tmp_path / "ref")

    # Outputs that exist are refused before any work, as the command line refuses them.
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "out").iterdir()}
    with pytest.raises(nd.CohortError, match="4 outputs exist"):
        nd.filter_files(["median", "--radius", "1"], inputs, template, client=cohort_client,
                        cli=cli)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "out").iterdir()} == before
    (tmp_path / "dup").mkdir()
    with pytest.raises(nd.CohortError, match="would both write"):
        nd.filter_files(["median"], [inputs[0], inputs[0]], str(tmp_path / "dup") + "/",
                        client=cohort_client, cli=cli)
    with pytest.raises(nd.CohortError, match="does not exist"):
        nd.filter_files(["median"], inputs, str(tmp_path / "nowhere") + "/", client=cohort_client,
                        cli=cli)
    with pytest.raises(nd.CohortError, match="not an executable"):
        nd.filter_files(["median"], inputs, template, client=cohort_client, cli=tmp_path / "no-cli")

    with pytest.raises(nd.CohortError, match="at least 1"):
        nd.filter_files(["median"], inputs, template, client=cohort_client, cli=cli, force=True,
                        files_per_task=0)

    # force replaces them, with the same bytes.
    result = nd.filter_files(["median", "--radius", "1"], inputs, template, client=cohort_client,
                             cli=cli, force=True, files_per_task=per_task)
    assert result.ok
    _same_files(tmp_path / "out", tmp_path / "ref")


def test_console_script(cohort_client, cli, tmp_path, rng):
    inputs = _cohort(tmp_path, rng, 3)
    listing = tmp_path / "cohort.txt"
    listing.write_text("# the cohort\n" + "\n".join(inputs[1:]) + "\n\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "ref").mkdir()
    _cli_batch(cli, "mean", inputs, str(tmp_path / "ref"), ["--box", "3vox"])
    command = [sys.executable, "-m", "ndconv.dask", "mean", inputs[0], "--list", str(listing),
               "-o", str(tmp_path / "out"), "--scheduler", cohort_client.scheduler.address,
               "--cli", cli, "--", "--box", "3vox"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "3 inputs written" in done.stderr
    _same_files(tmp_path / "out", tmp_path / "ref")
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 2 and "outputs exist" in again.stderr
    # A failed input is named, the others written, exit 1.
    listing.write_text(str(tmp_path / "missing.nii.gz") + "\n")
    (tmp_path / "out2").mkdir()
    command[command.index("-o") + 1] = str(tmp_path / "out2")
    failed = subprocess.run(command, capture_output=True, text=True)
    assert failed.returncode == 1
    assert "missing.nii.gz: " in failed.stderr
    assert "1 of 2 inputs failed (named above); the others were written" in failed.stderr
    assert [p.name for p in (tmp_path / "out2").iterdir()] == ["in_000.nii.gz"]


def test_cohort_refuses_options_that_name_files(tmp_path, cli):
    for option in (["--preview", "p.png"], ["-o", "x/"], ["--list=l.txt"]):
        with pytest.raises(nd.CohortError, match="names a file of its own"):
            nd.filter_files(["smooth", *option], ["a.nii.gz"], str(tmp_path) + "/", cli=cli)
    with pytest.raises(nd.CohortError, match="subcommand"):
        nd.filter_files(["--sigma", "1"], ["a.nii.gz"], str(tmp_path) + "/", cli=cli)
    with pytest.raises(nd.CohortError, match="neither a folder"):
        nd.filter_files(["smooth"], ["a.nii.gz"], str(tmp_path / "out.nii.gz"), cli=cli)
    with pytest.raises(nd.CohortError, match="bad output template"):
        nd.filter_files(["smooth"], ["a.nii.gz"], str(tmp_path / "{base}.nii.gz"), cli=cli)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name,stem,ext", [("a.nii.gz", "a", ".nii.gz"),
                                           ("b.seq.nrrd", "b", ".seq.nrrd"),
                                           ("c.v2.mha", "c.v2", ".mha"),
                                           ("dicomdir", "dicomdir", "")])
def test_output_names_follow_the_command_line(name, stem, ext):
    from ndconv.dask.cohort import output_path

    assert output_path("out/{stem}_s{ext}", f"in/{name}") == Path(f"out/{stem}_s{ext}")
    assert output_path("out/{name}", f"in/{name}") == Path(f"out/{name}")
    assert output_path("out/", f"/data/{name}") == Path(f"out/{name}")
