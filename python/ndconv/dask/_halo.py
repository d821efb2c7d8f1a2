"""Blocks with halos: how far each output of a filter reads along each axis, and the graphs that
make a blockwise result equal to the whole array's.

The rule (docs/scale-out.md#depth): a block is filtered together with ``depth[axis]`` neighbouring
voxels on each side along every axis, ``depth[axis]`` being the farthest any output reads along
that axis (a separable pass along x reads only along x, so the depths of the passes do not add
across axes). The outputs of the halo are cut away. At the array's true edges nothing is added and the filter's
own mode extends the array there, exactly as when the whole array is filtered; only 'wrap' takes
its halo from the other side of the array. An axis whose halo would be as long as the array itself is not cut.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field

import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array

from .._scipy_args import MODES
from . import _gpu_halo


@dataclass
class Reach:
    """How far a filter reads along one axis, and the modes that extend the array along it."""

    depth: int = 0
    modes: set = field(default_factory=set)

    def add(self, depth: int, mode) -> None:
        self.depth = max(self.depth, int(depth))
        if depth > 0:
            self.modes.add(MODES.get(mode, mode))


def no_reach(ndim: int) -> list:
    return [Reach() for _ in range(ndim)]


def as_dask_array(array) -> da.Array:
    if isinstance(array, da.Array):
        return array
    raise TypeError(f"ndconv.dask filters dask arrays, not {type(array).__name__}; wrap it with "
                    f"dask.array.from_array (or use ndconv.ndimage for an array in memory)")


def _plan_axes(x: da.Array, reach: list):
    """The depth and dask boundary per axis, and the axes to keep in one chunk."""
    depth, boundary, whole = {}, {}, {}
    for axis, r in enumerate(reach):
        d = r.depth
        periodic = r.modes == {"periodic"}
        # 'wrap' mixed with another mode along one axis (gaussian_laplace's terms with different
        # modes) has no dask boundary; nor has a halo as long as the axis.
        if d > 0 and (d >= x.shape[axis] or ("periodic" in r.modes and not periodic)):
            whole[axis] = -1
            d = 0
        if d > 0 and len(x.chunks[axis]) == 1:
            d = 0  # one chunk along the axis: the filter sees the whole axis anyway
        depth[axis] = d
        boundary[axis] = "periodic" if d > 0 and periodic else "none"
    return depth, boundary, whole


def _axis_pieces(bounds, first: int, stop: int, depth: int, periodic: bool):
    """The input of output rows [first, stop) along one axis with its halo, as pieces
    (block, start in the block, stop in the block, start in the halo'd input), and where the
    outputs lie in that input: clipped at the array's ends (the filter's mode extends it there),
    or wrapped round them for 'wrap'."""
    n = bounds[-1]
    lo, hi = first - depth, stop + depth
    if not periodic:
        lo, hi = max(lo, 0), min(hi, n)
    pieces, at, position = [], lo, 0
    while at < hi:
        g = at % n  # the array's own row (differs from `at` only when wrapping)
        block = int(np.searchsorted(bounds, g, side="right")) - 1
        length = min(bounds[block + 1] - g, hi - at)
        pieces.append((block, g - bounds[block], g - bounds[block] + length, position))
        at += length
        position += length
    return pieces, first - lo, hi - lo


def _assemble_and_filter(*blocks, block_filter, shape, pieces, layout, outputs, count,
                         block_id=None):
    """One output block: its input with the halo copied together from the neighbouring blocks
    (CuPy blocks by one kernel where the layout fits, _gpu_halo), filtered, the halo's outputs cut
    away. With `block_id` the last argument is overlap_filter's `extra`, passed on."""
    if block_id is not None:
        *blocks, extra = blocks
    halo = np.empty_like(blocks[0], shape=shape)
    _gpu_halo.assemble(halo, pieces, layout, blocks)
    result = block_filter(halo) if block_id is None else block_filter(halo, extra, block_id=block_id)
    return result[((slice(None),) if count is not None else ()) + outputs]


def _on_gpu(x: da.Array) -> bool:
    return type(x._meta).__module__.split(".")[0] == "cupy"


def overlap_filter(x: da.Array, block_filter, reach: list, dtype, count=None,
                   extra=None) -> da.Array:
    """``block_filter`` over every block of `x` with its halo, the halo's outputs cut away: the
    whole array's result, block by block, lazily. A block's result has the block's shape, or
    ``(count,) + shape`` with `count` (the filter bank: one output per filter along a new first
    axis). With `extra` (a dask Delayed: the adaptive filter's scales), every block is filtered by
    ``block_filter(block, value of extra, block_id=its index)``.

    Two graphs, chosen by where the chunks live. CuPy chunks: one task per output block that reads
    its neighbouring blocks whole and copies their parts into one halo'd input (one kernel launch),
    because ``map_overlap``'s tasks per block (a slice of every neighbour, a concatenation, a trim)
    cost more than the filter itself on a GPU. A block's result equals the whole array's there
    whatever plan the engine takes for the block's extents, because every GPU plan of a filter
    computes the same bits (src/cuda/separable/slab_thread.h, "Arithmetic"). Host chunks: dask's ``overlap``, whose tasks hold
    only thin slices of the neighbours, so a worker with little memory can stream a volume far
    larger than itself (a task holding 27 whole neighbours had workers killed in the 4x zarr
    test)."""
    dtype = np.dtype(dtype)
    depth, boundary, whole = _plan_axes(x, reach)
    if whole:
        x = x.rechunk(whole)
    if count is None:
        meta = meta_from_array(x, x.ndim, dtype)
        chunks = x.chunks
    else:
        meta = meta_from_array(x, x.ndim + 1, dtype)
        chunks = ((count,),) + x.chunks
    arguments = () if extra is None else (extra,)
    if extra is not None:
        def with_extra(block, value, block_id=None, _filter=block_filter):
            return _filter(block, value, block_id=block_id)
        block_filter = with_extra
    if not any(depth.values()):
        if count is None:
            return x.map_blocks(block_filter, *arguments, dtype=dtype, meta=meta)
        return x.map_blocks(block_filter, *arguments, new_axis=0, chunks=chunks, dtype=dtype,
                            meta=meta)
    if _on_gpu(x):
        return _neighbour_graph(x, block_filter, depth, boundary, dtype, count, chunks, meta,
                                extra)
    x = da.overlap.overlap(x, depth=depth, boundary=boundary, allow_rechunk=True)
    if count is None:
        y = x.map_blocks(block_filter, *arguments, dtype=dtype, meta=meta)
    else:
        y = x.map_blocks(block_filter, *arguments, new_axis=0, chunks=((count,),) + x.chunks,
                         dtype=dtype, meta=meta)
        depth = {0: 0, **{axis + 1: d for axis, d in depth.items()}}
        boundary = {0: "none", **{axis + 1: b for axis, b in boundary.items()}}
    return da.overlap.trim_internal(y, depth, boundary)


def _neighbour_graph(x, block_filter, depth, boundary, dtype, count, chunks, meta,
                     extra=None) -> da.Array:
    """One task per output block: _assemble_and_filter of the blocks its halo reaches (and
    `extra`'s value last, with the block's index)."""
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    bounds = [np.concatenate([[0], np.cumsum(c)]).astype(int) for c in x.chunks]
    name = "ndconv-halo-" + tokenize(x, block_filter, depth, boundary, dtype, count, extra)
    per_axis = [[_axis_pieces(bounds[a], int(bounds[a][j]), int(bounds[a][j + 1]), depth[a],
                              boundary[a] == "periodic")
                 for j in range(len(x.chunks[a]))]
                for a in range(x.ndim)]
    graph = {}
    for index in itertools.product(*(range(len(c)) for c in x.chunks)):
        axes = [per_axis[a][j] for a, j in enumerate(index)]
        keys, pieces = {}, []
        for combination in itertools.product(*(a[0] for a in axes)):
            key = (x.name,) + tuple(piece[0] for piece in combination)
            source = tuple(slice(piece[1], piece[2]) for piece in combination)
            target = tuple(slice(piece[3], piece[3] + piece[2] - piece[1])
                           for piece in combination)
            pieces.append((keys.setdefault(key, len(keys)), source, target))
        layout = _gpu_halo.gather_layout([a[0] for a in axes], [p[0] for p in pieces])
        shape = tuple(a[2] for a in axes)
        outputs = tuple(slice(a[1], a[1] + int(bounds[k][j + 1] - bounds[k][j]))
                        for k, (a, j) in enumerate(zip(axes, index)))
        out_key = (name,) + ((0,) if count is not None else ()) + index
        graph[out_key] = (functools.partial(
            _assemble_and_filter, block_filter=block_filter, shape=shape, pieces=pieces,
            layout=layout, outputs=outputs, count=count,
            block_id=None if extra is None else index),
            *keys, *(() if extra is None else (extra.key,)))
    layers = HighLevelGraph.from_collections(
        name, graph, dependencies=[x] if extra is None else [x, extra])
    return da.Array(layers, name, chunks, dtype=dtype, meta=meta)
