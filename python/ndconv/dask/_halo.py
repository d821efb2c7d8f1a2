"""Blocks with halos: how far each output of a filter reads along each axis, and the
``map_overlap`` call that makes a blockwise result equal to the whole array's.

The rule (docs/scale-out.md#depth): a block is filtered together with ``depth[axis]`` neighbouring
voxels on each side along every axis, ``depth[axis]`` being the farthest any output reads along
that axis (a separable pass along x reads only along x, so the depths of the passes do not add
across axes). The outputs of the halo are cut away. At the array's true edges dask adds nothing
(``boundary='none'``) and the filter's own mode extends the array there, exactly as when the whole
array is filtered; only 'wrap' takes its halo from the other side of the array
(``boundary='periodic'``). An axis whose halo would be as long as the array itself is not cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array

from .._scipy_args import MODES


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


def overlap_filter(x: da.Array, block_filter, reach: list, dtype, count=None) -> da.Array:
    """``block_filter`` over every block of `x` with its halo, the halo's outputs cut away: the
    whole array's result, block by block, lazily. A block's result has the block's shape, or
    ``(count,) + shape`` with `count` (the filter bank: one output per filter along a new first
    axis)."""
    dtype = np.dtype(dtype)
    depth, boundary, whole = _plan_axes(x, reach)
    if whole:
        x = x.rechunk(whole)
    cut = any(depth.values())
    if cut:
        x = da.overlap.overlap(x, depth=depth, boundary=boundary, allow_rechunk=True)
    if count is None:
        y = x.map_blocks(block_filter, dtype=dtype, meta=meta_from_array(x, x.ndim, dtype))
    else:
        y = x.map_blocks(block_filter, new_axis=0, chunks=((count,),) + x.chunks, dtype=dtype,
                         meta=meta_from_array(x, x.ndim + 1, dtype))
        depth = {0: 0, **{axis + 1: d for axis, d in depth.items()}}
        boundary = {0: "none", **{axis + 1: b for axis, b in boundary.items()}}
    return da.overlap.trim_internal(y, depth, boundary) if cut else y
