"""CuPy blocks with halos: one output block's halo'd input copied together from its neighbouring
blocks by one kernel launch on the current stream.

Why: a halo'd 3D block is 27 pieces of up to 27 neighbours, and a CuPy slice assignment per piece
costs host time under the GIL that dask's threads share: on the H200 (run 19) the 64 blocks of a
1024^3 array of 256^3 chunks took 23.6 ms by pieces and 8.2 ms by this kernel, on one thread. The
kernel takes every piece at once: each row of the halo'd block (all axes but the last fixed) knows
from the per-axis segment tables which neighbours its three runs along the last axis come from.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

# The kernel copies elements as unsigned integers of their size: bit for bit, any dtype.
_ELEMENT_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
                  8: "unsigned long long"}
_MAX_AXES = 4
_SEGMENTS = 3  # along an axis: the left neighbour's part, the block, the right neighbour's part
_ROWS_PER_CTA = 8
_UNROLL = 4  # elements a thread reads before it writes them
_NOWHERE = 2**62  # the start of a segment an axis does not have


def gather_layout(axes, sources):
    """The kernel's description of one halo'd block, or None when it does not fit the kernel
    (more than 4 axes, or more than 3 pieces along an axis: chunks smaller than the halo).

    `axes`: per axis the pieces as _halo._axis_pieces gives them ((block, start, stop, position)
    in the order of their positions); `sources`: per combination of one piece per axis (in
    itertools.product's order) the index among the task's inputs of the block it reads. Returns
    (segments, sources): per axis ((position, start) per piece), and per radix-3 combination of
    pieces the input's index (-1 where an axis has fewer pieces)."""
    if len(axes) > _MAX_AXES or any(len(pieces) > _SEGMENTS for pieces in axes):
        return None
    segments = tuple(tuple((p[3], p[1]) for p in pieces) for pieces in axes)
    by_radix = [-1] * _SEGMENTS ** len(axes)
    for combination, index in zip(itertools.product(*(range(len(p)) for p in axes)), sources):
        k = 0
        for g in combination:
            k = k * _SEGMENTS + g
        by_radix[k] = index
    return segments, tuple(by_radix)


def segment_scalars(segments):
    """Per axis (start of segment 1, start of segment 2, delta of segments 0, 1, 2): the kernel's
    rule is segment g = 0 below the first start, 1 below the second, else 2, and the neighbour's
    row = the halo's row + delta[g]."""
    scalars = []
    for axis in segments:
        starts = [position for position, _ in axis[1:]] + [_NOWHERE] * (_SEGMENTS - len(axis))
        deltas = [start - position for position, start in axis] + [0] * (_SEGMENTS - len(axis))
        scalars.append((*starts, *deltas))
    return scalars


def _kernel_source(ndim: int, itemsize: int) -> str:
    name = f"ndconv_halo_gather_{ndim}d_{itemsize}"
    last = ndim - 1
    params = ["T* out", "long long rows", "long long n_last"]
    for a in range(ndim):
        if a < last:
            params.append(f"long long e{a}")
        params += [f"long long b{a}_{s}" for s in (1, 2)]
        params += [f"long long d{a}_{s}" for s in range(_SEGMENTS)]
    for k in range(_SEGMENTS ** ndim):
        params.append(f"long long p{k}")
        params += [f"long long s{k}_{a}" for a in range(ndim)]

    def segment(a, c):
        """The segment of row `c` along axis `a`, and that row in the segment's block."""
        return [f"  const int g{c} = {c} < b{a}_1 ? 0 : ({c} < b{a}_2 ? 1 : 2);",
                f"  const long long x{c} = {c} + (g{c} == 0 ? d{a}_0 : (g{c} == 1 ? d{a}_1 : "
                f"d{a}_2));"]

    lines = [f"typedef {_ELEMENT_TYPES[itemsize]} T;",
             f"extern \"C\" __global__ void {name}({', '.join(params)}) {{",
             "  const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;",
             "  if (row >= rows) return;"]
    if last > 0:
        lines.append("  long long rest = row;")
    for a in reversed(range(last)):  # the row's coordinates, the last leading axis fastest
        lines += [f"  const long long c{a} = rest % e{a};", f"  rest /= e{a};"]
        lines += segment(a, f"c{a}")
    # the combination of segments (radix 3, the first axis most significant) of the row's
    # three runs along the last axis
    lines.append("  const int k = 0" + "".join(f" + gc{a} * {_SEGMENTS ** (last - a)}"
                                            for a in range(last)) + ";")
    for j in range(_SEGMENTS):
        lines += [f"  const char* base{j} = 0;", f"  long long step{j} = 0;",
                  f"  switch (k + {j}) {{"]
        for k in range(_SEGMENTS ** ndim):
            offset = "".join(f" + xc{a} * s{k}_{a}" for a in range(last))
            lines.append(f"    case {k}: base{j} = (const char*)p{k}{offset}; "
                         f"step{j} = s{k}_{last}; break;")
        lines.append("  }")
    # _UNROLL loads of a thread issued before its stores, so that enough reads are in flight
    lines += ["  T* o = out + row * n_last;",
              f"  for (long long first = threadIdx.x; first < n_last; "
              f"first += {_UNROLL} * blockDim.x) {{",
              f"    T v[{_UNROLL}];",
              "#pragma unroll",
              f"    for (int u = 0; u < {_UNROLL}; ++u) {{",
              "      const long long c = first + u * blockDim.x;",
              "      if (c < n_last) {"]
    lines += ["        " + line.strip() for line in segment(last, "c")]
    lines += ["        const char* base = gc == 0 ? base0 : (gc == 1 ? base1 : base2);",
              "        const long long step = gc == 0 ? step0 : (gc == 1 ? step1 : step2);",
              "        v[u] = *reinterpret_cast<const T*>(base + xc * step);",
              "      }",
              "    }",
              "#pragma unroll",
              f"    for (int u = 0; u < {_UNROLL}; ++u) {{",
              "      const long long c = first + u * blockDim.x;",
              "      if (c < n_last) o[c] = v[u];",
              "    }",
              "  }",
              "}"]
    return "\n".join(lines) + "\n", name


_kernels = {}
_kernels_lock = threading.Lock()


def _kernel(cupy, ndim: int, itemsize: int):
    key = (ndim, itemsize)
    with _kernels_lock:
        if key not in _kernels:
            source, name = _kernel_source(ndim, itemsize)
            _kernels[key] = cupy.RawKernel(source, name)
        return _kernels[key]


def fits_kernel(layout, blocks) -> bool:
    return layout is not None and blocks[0].dtype.itemsize in _ELEMENT_TYPES


def gather(cupy, halo, layout, blocks) -> None:
    """Copies the halo'd block `halo` (contiguous, CuPy) together from `blocks` in one launch on
    the current stream."""
    if halo.size == 0:
        return
    segments, sources = layout
    ndim = halo.ndim
    i64 = np.int64
    rows = halo.size // halo.shape[-1]
    args = [halo, i64(rows), i64(halo.shape[-1])]
    for a, scalars in enumerate(segment_scalars(segments)):
        if a < ndim - 1:
            args.append(i64(halo.shape[a]))
        args += [i64(v) for v in scalars]
    for index in sources:
        if index < 0:
            args += [i64(0)] * (1 + ndim)
        else:
            block = blocks[index]
            args.append(i64(block.data.ptr))
            args += [i64(s) for s in block.strides]
    _kernel(cupy, ndim, halo.dtype.itemsize)(
        ((rows + _ROWS_PER_CTA - 1) // _ROWS_PER_CTA,), (32, _ROWS_PER_CTA), tuple(args))


def copy_pieces(halo, pieces, blocks) -> None:
    """The halo'd block copied together piece by piece (numpy or CuPy)."""
    for index, source, target in pieces:
        halo[target] = blocks[index][source]


def assemble(halo, pieces, layout, blocks) -> None:
    """The halo'd block copied together: by the kernel for CuPy blocks whose layout fits it, else
    piece by piece."""
    if type(halo).__module__.split(".")[0] == "cupy" and fits_kernel(layout, blocks):
        import cupy

        gather(cupy, halo, layout, blocks)
    else:
        copy_pieces(halo, pieces, blocks)
