"""ndconv.ndimage's filters on dask arrays: each block filtered by ndconv.ndimage with the halo
its filter reads, so that the result equals filtering the whole array at once, bit for bit.

Every function takes the arguments of its ndconv.ndimage namesake (scipy.ndimage's, plus
``device``, ``threads``, ``spacing``), except that ``output`` may only be a dtype, and returns a
lazy dask array of the input's chunk type (numpy or CuPy).
"""

from __future__ import annotations

import functools
import inspect

import dask.array as da
import numpy as np

from .. import ndimage
from .. import _ndconv
from .._engine import adaptive_filter as _adaptive_filter
from .._engine import adaptive_scales as _ndconv_adaptive_scales
from .._engine import filter_bank as _filter_bank
from .._scipy_args import check_axes, normalize_sequence
from ._halo import as_dask_array, no_reach, overlap_filter



def _reach_of_taps(size: int, origin: int) -> int:
    """The farthest a filter of `size` taps centred at ``size // 2 + origin`` reads."""
    left = size // 2 + int(origin)
    return max(left, size - 1 - left)


def _convolution_origin(origin: int, size: int) -> int:
    """The correlation origin of a convolution (the filter flipped), as scipy.ndimage takes it."""
    return -int(origin) - (0 if size & 1 else 1)


def _gaussian_radius(sigma, order, truncate, radius, spacing=1.0) -> int:
    sigma = float(sigma) / float(spacing)
    if sigma <= 1e-15:  # ndconv.ndimage skips such an axis
        return 0
    return len(ndimage._gaussian_taps(sigma, order, truncate, radius)) // 2


def _spacings(spacing, ndim):
    return [1.0] * ndim if spacing is None else normalize_sequence(spacing, ndim, "spacing")


# ---- the reach of each filter, from its bound arguments ------------------------------------------


def _reach_correlate1d(ndim, a, convolution=False):
    reach = no_reach(ndim)
    size = len(np.atleast_1d(np.asarray(a["weights"])))
    origin = _convolution_origin(a["origin"], size) if convolution else a["origin"]
    reach[check_axes((a["axis"],), ndim)[0]].add(_reach_of_taps(size, origin), a["mode"])
    return reach


def _reach_correlate(ndim, a):
    """scipy's rule: the weights' axes go to the filtered axes in increasing order. The origins'
    pairing with the axes has its own rule (ndconv.ndimage); the halo takes the largest shift on
    every filtered axis, which covers any pairing."""
    reach = no_reach(ndim)
    axes = sorted(check_axes(a["axes"], ndim))
    shift = max(abs(int(o)) for o in normalize_sequence(a["origin"], len(axes), "origin"))
    for axis, size in zip(axes, np.shape(a["weights"])):
        # a convolution's flipped filter (origin -o, one less for an even size) reads no farther
        reach[axis].add(size // 2 + shift, a["mode"])
    return reach


def _reach_gaussian_filter1d(ndim, a):
    reach = no_reach(ndim)
    radius = _gaussian_radius(a["sigma"], a["order"], a["truncate"], a["radius"])
    reach[check_axes((a["axis"],), ndim)[0]].add(radius, a["mode"])
    return reach


def _reach_gaussian_filter(ndim, a):
    reach = no_reach(ndim)
    axes = check_axes(a["axes"], ndim)
    n = len(axes)
    spacing = _spacings(a["spacing"], ndim)
    for axis, sigma, order, mode, radius in zip(
            axes, normalize_sequence(a["sigma"], n, "sigma"),
            normalize_sequence(a["order"], n, "order"), normalize_sequence(a["mode"], n, "mode"),
            normalize_sequence(a["radius"], n, "radius")):
        reach[axis].add(_gaussian_radius(sigma, order, a["truncate"], radius, spacing[axis]),
                        mode)
    return reach


def _reach_gaussian_sum(ndim, a, order):
    """gaussian_laplace / gaussian_gradient_magnitude: one Gaussian derivative per filtered axis,
    each with that axis's mode along every axis, summed."""
    reach = no_reach(ndim)
    axes = check_axes(a["axes"], ndim)
    n = len(axes)
    truncate = a["kwargs"].get("truncate", 4.0)
    radius = a["kwargs"].get("radius")
    spacing = _spacings(a["spacing"], ndim)
    sigmas = normalize_sequence(a["sigma"], n, "sigma")
    for term_mode in normalize_sequence(a["mode"], n, "mode"):
        for axis, sigma in zip(axes, sigmas):
            for o in {0, order}:
                reach[axis].add(_gaussian_radius(sigma, o, truncate, radius, spacing[axis]),
                                term_mode)
    return reach


def _reach_uniform_filter1d(ndim, a):
    reach = no_reach(ndim)
    reach[check_axes((a["axis"],), ndim)[0]].add(_reach_of_taps(a["size"], a["origin"]),
                                                   a["mode"])
    return reach


def _reach_uniform_filter(ndim, a):
    reach = no_reach(ndim)
    axes = check_axes(a["axes"], ndim)
    n = len(axes)
    for axis, size, origin, mode in zip(axes, normalize_sequence(a["size"], n, "size"),
                                        normalize_sequence(a["origin"], n, "origin"),
                                        normalize_sequence(a["mode"], n, "mode")):
        reach[axis].add(_reach_of_taps(size, origin), mode)
    return reach


def _reach_median_filter(ndim, a):
    reach = no_reach(ndim)
    axes = check_axes(a["axes"], ndim)
    if a["footprint"] is not None:
        sizes = np.shape(a["footprint"])
    else:
        sizes = normalize_sequence(a["size"], len(axes), "size")
    for axis, size in zip(sorted(axes), sizes):  # as the weights of correlate
        reach[axis].add(int(size) // 2, a["mode"])
    return reach


def _reach_edge(ndim, a):
    """sobel, prewitt: 3 taps along every axis."""
    reach = no_reach(ndim)
    for axis, mode in enumerate(normalize_sequence(a["mode"], ndim, "mode")):
        reach[axis].add(1, mode)
    return reach


def _reach_laplace(ndim, a):
    reach = no_reach(ndim)
    axes = check_axes(a["axes"], ndim)
    for axis, mode in zip(axes, normalize_sequence(a["mode"], len(axes), "mode")):
        reach[axis].add(1, mode)
    return reach


_REACH = {
    "correlate1d": _reach_correlate1d,
    "convolve1d": functools.partial(_reach_correlate1d, convolution=True),
    "correlate": _reach_correlate,
    "convolve": _reach_correlate,
    "gaussian_filter1d": _reach_gaussian_filter1d,
    "gaussian_filter": _reach_gaussian_filter,
    "gaussian_laplace": functools.partial(_reach_gaussian_sum, order=2),
    "gaussian_gradient_magnitude": functools.partial(_reach_gaussian_sum, order=1),
    "uniform_filter1d": _reach_uniform_filter1d,
    "uniform_filter": _reach_uniform_filter,
    "median_filter": _reach_median_filter,
    "sobel": _reach_edge,
    "prewitt": _reach_edge,
    "laplace": _reach_laplace,
}


# ---- the wrappers ------------------------------------------------------------------------------


def _output_dtype(output, input_dtype) -> np.dtype:
    if output is None:
        return np.dtype(input_dtype)
    if isinstance(output, (str, type, np.dtype)):
        return np.dtype(output)
    raise TypeError("ndconv.dask filters take output as a dtype, not an array (the result is a "
                    "new dask array; store it with dask.array.store or to_zarr)")


def _check_on_sample(block_filter, x) -> None:
    """Runs the filter on a few voxels of the input's dtype, so that a bad argument fails when
    the graph is built, with ndconv.ndimage's own message, not when it is computed."""
    block_filter(np.zeros([min(n, 4) for n in x.shape], dtype=x.dtype))


def halo(name: str, ndim: int, *args, **kwargs) -> tuple:
    """The voxels each output of ``ndconv.ndimage.<name>(input, *args, **kwargs)`` reads on each
    side along each axis of an input of `ndim` axes: the halo its dask function gives each block
    (less on an axis kept in one chunk).

    >>> halo("gaussian_filter", 3, sigma=(1, 2, 0))
    (4, 8, 0)
    """
    if name not in _REACH:
        raise ValueError(f"unknown filter {name!r}; the filters are {', '.join(_REACH)}")
    bound = inspect.signature(getattr(ndimage, name)).bind(None, *args, **kwargs)
    bound.apply_defaults()
    return tuple(r.depth for r in _REACH[name](int(ndim), bound.arguments))


def _wrap(name: str):
    scipy_like = getattr(ndimage, name)
    signature = inspect.signature(scipy_like)
    reach_of = _REACH[name]

    def dask_filter(input, *args, **kwargs):
        x = as_dask_array(input)
        bound = signature.bind(input, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        del arguments["input"]
        dtype = _output_dtype(arguments["output"], x.dtype)
        arguments["output"] = dtype
        call = {k: v for k, v in arguments.items() if k != "kwargs"}
        call.update(arguments.get("kwargs", {}))
        block_filter = functools.partial(scipy_like, **call)
        _check_on_sample(block_filter, x)
        return overlap_filter(x, block_filter, reach_of(x.ndim, arguments), dtype)

    dask_filter.__name__ = dask_filter.__qualname__ = name
    dask_filter.__signature__ = signature
    dask_filter.__doc__ = (f"ndconv.ndimage.{name} on a dask array, block by block with the halo "
                           f"the filter reads: the result equals the whole array's, bit for "
                           f"bit.\n\n"
                           f"Parameters as :func:`ndconv.ndimage.{name}` (`output` a dtype only);"
                           f" returns a lazy dask array.\n")
    return dask_filter


# One dask function per ndconv.ndimage filter whose reach is known (test_dask.py checks that
# every one is).
for _name in _REACH:
    globals()[_name] = _wrap(_name)

__all__ = [name for name in ndimage.__all__ if name in _REACH] + ["filter_bank", "adaptive_filter"]


def filter_bank(input, filters, mode="nearest", cval=0.0, *, device="auto", threads=0):
    """:func:`ndconv.filter_bank` on a dask array: a list of lazy float32 dask arrays, one per
    filter, each the whole array's result bit for bit.

    The bank's pass runs once per block and yields every filter's output (a dask array of shape
    ``(count,) + input.shape`` underneath, whose items are returned).
    """
    x = as_dask_array(input)
    taps = np.asarray(filters)
    reach = no_reach(x.ndim)
    for axis, size in enumerate(taps.shape[1:]):
        reach[axis].add(int(size) // 2, mode)

    def bank_block(block):
        return np.stack(_filter_bank(block, taps, mode, cval, device=device, threads=threads))

    _filter_bank(np.zeros([min(n, 4) for n in x.shape], x.dtype), taps, mode, cval,
                 device=device, threads=threads)
    stacked = overlap_filter(x, bank_block, reach, np.float32, count=taps.shape[0])
    return [stacked[i] for i in range(taps.shape[0])]


def _host(block):
    """A block as the adaptive filter's engine call takes it (a host array), and how to give the
    result back in the block's kind."""
    if type(block).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy.asnumpy(block), cupy.asarray
    return block, lambda result: result


def _adaptive_scales(x, reach, frame_series, options):
    """The whole image's normalising scales (one per frame of a frame series, else one), lazily:
    each block read with the halo its structure tensor needs (`reach`) gives the largest
    magnitude over its own voxels (ndconv.adaptive_scales' interior), and the largest of those is
    the whole image's, bit for bit (a maximum of the same per-voxel values)."""
    import dask
    from dask.array.overlap import ensure_minimum_chunksize

    from ._halo import _plan_axes

    depth, boundary, whole = _plan_axes(x, reach)
    if whole:
        x = x.rechunk(whole)
    x = x.rechunk(tuple(ensure_minimum_chunksize(depth[a], c) if depth[a] else c
                        for a, c in enumerate(x.chunks)))
    halo_x = da.overlap.overlap(x, depth=depth, boundary=boundary, allow_rechunk=False)
    chunks = x.chunks

    def block_scales(block, block_id=None):
        interior = []
        for a, i in enumerate(block_id):
            before = depth[a] if depth[a] and (boundary[a] == "periodic" or i > 0) else 0
            interior.append(slice(before, before + chunks[a][i]))
        host, _ = _host(block)
        scales = _ndconv_adaptive_scales(host, interior=tuple(interior), frames=frame_series,
                                         **options)
        return np.asarray(scales, np.float64).reshape((1,) * x.ndim)

    per_block = halo_x.map_blocks(block_scales, chunks=tuple((1,) * len(c) for c in chunks),
                                  dtype=np.float64, meta=np.empty((0,) * x.ndim, np.float64))
    largest = per_block.max(axis=tuple(range(1 if frame_series else 0, x.ndim)))
    return dask.delayed(lambda *parts: np.atleast_1d(np.concatenate(
        [np.atleast_1d(p) for p in parts])))(*largest.to_delayed().ravel())


def adaptive_filter(input, output=None, *, frames=False, **options):
    """:func:`ndconv.adaptive_filter` on a dask array, block by block, the result the whole
    array's bit for bit.

    The adaptive filter divides its structure tensor by its largest eigenvalue (or norm) over the
    whole image (each frame's with ``frames=True``), so it runs in two passes over the blocks:
    first each block, read with the halo its structure tensor needs, gives the largest over its
    own voxels (:func:`ndconv.adaptive_scales`), and the largest of those is the image's; then
    each block is filtered with the halo of the filter's whole support, divided by that scale.
    Chunks may be smaller than the halo (they are merged where needed); an image (a frame) in one
    chunk is filtered in one pass. With ``frames=True`` on a
    4D series each chunk holds one frame. With ``coarse_orientation=True`` the image (each frame)
    is kept in one chunk instead (the coarse estimate subsamples the image by 2). Host or CuPy
    chunks (a CuPy block goes through host memory: the engine's adaptive filter takes host
    arrays, and runs on the GPU with ``device``).
    """
    x = as_dask_array(input)
    dtype = _output_dtype(output, x.dtype)
    if "scale" in options:
        raise TypeError("ndconv.dask.adaptive_filter computes the scale itself (the whole "
                        "image's); it takes no scale")
    frame_series = bool(frames) and x.ndim == 4
    coarse = bool(options.get("coarse_orientation", False))
    if coarse:
        x = x.rechunk({1: -1, 2: -1, 3: -1} if frame_series else -1)
    elif frame_series:
        x = x.rechunk({0: 1})
    check = functools.partial(_adaptive_filter, output=dtype, frames=frames, **options)
    _check_on_sample(check, x)
    # An image (a frame) in one chunk is filtered as a whole: its own scale is the image's, so the
    # first pass would only repeat the structure tensor (about half the filter's time).
    if coarse or all(n == 1 for n in x.numblocks[1 if frame_series else 0:]):
        return overlap_filter(x, check, no_reach(x.ndim), dtype)

    parameters = {k: v for k, v in options.items()
                  if k not in ("mode", "device", "threads", "coarse_orientation", "preset")}
    tensor_depth, output_depth = _ndconv.adaptive_reach(str(options.get("preset", "default")),
                                                        parameters)
    mode = options.get("mode", "nearest")
    tensor_reach, output_reach = no_reach(x.ndim), no_reach(x.ndim)
    for axis in range(1 if frame_series else 0, x.ndim):
        tensor_reach[axis].add(tensor_depth, mode)
        output_reach[axis].add(output_depth, mode)
    scales = _adaptive_scales(x, tensor_reach, frame_series, options)

    def filter_block(block, scales, block_id=None):
        host, back = _host(block)
        scale = scales[block_id[0]] if frame_series else scales[0]
        result = _adaptive_filter(host, output=dtype, frames=frames, scale=float(scale), **options)
        return back(result)

    return overlap_filter(x, filter_block, output_reach, dtype, extra=scales)
