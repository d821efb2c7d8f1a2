"""ndconv's own filters (the filter bank, the orientation-adaptive filter) and the engine's plan."""

from __future__ import annotations

import numpy as np

from . import _ndconv
from ._arrays import Operand
from ._scipy_args import check_cval, engine_mode

_ADAPTIVE_PARAMETERS = ("smoothing", "relaxation", "threshold", "anisotropy", "blend",
                        "quadrature_size", "reconstruction_size")


def filter_bank(input, filters, mode="nearest", cval=0.0, *, device="auto", threads=0):
    """Correlates one array with several real filters of one shape in one pass over it.

    Parameters
    ----------
    input : array_like
        A host array of 2 to 4 axes (numpy, or anything numpy takes).
    filters : array_like
        Shape ``(count,) + filter_shape``, one axis per input axis; odd sizes.
    mode : str
        As scipy.ndimage (default 'nearest').
    cval : float
        The value outside with mode='constant'.
    device, threads
        As in :mod:`ndconv.ndimage`.

    Returns
    -------
    list of numpy.ndarray
        One float32 array per filter, of the input's shape.
    """
    op = Operand(input)
    if op.on_gpu:
        raise ValueError("filter_bank takes host arrays; move the array to the host first")
    taps = np.asarray(filters)
    if taps.dtype.kind == "c":
        raise TypeError("filter_bank takes real filters (a complex filter is two real ones)")
    taps = np.ascontiguousarray(taps, dtype=np.float32)
    if taps.ndim != op.ndim + 1:
        raise ValueError(f"filters must have shape (count,) + a filter shape of {op.ndim} axes, "
                         f"not {taps.shape}")
    if taps.shape[0] < 1:
        raise ValueError("filters holds no filter")
    if not np.all(np.isfinite(taps)):
        raise ValueError("filters must be finite")
    cval = check_cval(cval)
    outputs = [np.empty(op.shape, np.float32) for _ in range(taps.shape[0])]
    _ndconv.filter_bank(op.engine_input(float32=True), taps, outputs,
                        op.settings(engine_mode(mode, cval), cval, device, threads))
    return [op.give_back(o) for o in outputs]


def _check_adaptive_parameters(parameters):
    unknown = sorted(set(parameters) - set(_ADAPTIVE_PARAMETERS))
    if unknown:
        raise TypeError(f"unknown adaptive parameters: {', '.join(unknown)}; the parameters are "
                        f"{', '.join(_ADAPTIVE_PARAMETERS)}")
    for name, value in parameters.items():
        if value is not None and not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number, not {value!r}")


def _check_scale(scale) -> float:
    """The binding's scale: negative for None (computed)."""
    if scale is None:
        return -1.0
    value = float(scale)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"scale must be a finite number >= 0 (or None: computed), not {scale!r}")
    return value


def adaptive_filter(input, output=None, *, preset="default", frames=False, coarse_orientation=False,
                    mode="nearest", device="auto", threads=0, return_report=False, scale=None,
                    **parameters):
    """Orientation-adaptive denoising (Knutsson, Westin, Granlund): smooths flat regions and along
    structures, keeps edges; 2D, 3D and true 4D (3D + time). See docs/adaptive.md.

    Parameters
    ----------
    input : array_like
        A host array of 2 to 4 axes (slowest first: ``(t, z, y, x)`` for a 4D series).
    output : numpy.ndarray or dtype, optional
        Where to write, or the dtype (default: the input's).
    preset : {'default', 'echo'}
        The parameter set; 'echo' suits ultrasound speckle (echocardiography).
    frames : bool
        4D: filter each 3D frame on its own instead of true 4D.
    coarse_orientation : bool
        Estimate the orientation on the image subsampled by 2 (faster, coarser).
    mode : str
        As scipy.ndimage (default 'nearest').
    device, threads
        As in :mod:`ndconv.ndimage`.
    return_report : bool
        Also return the engine's report (backend, seconds per stage, ``normalisation_scales``:
        the scale the structure tensor was divided by, one per frame with `frames`).
    scale : float, optional
        Divide the structure tensor by this instead of its largest eigenvalue (or norm) over the
        image (over each frame with `frames`): the whole image's, from :func:`adaptive_scales`,
        when the image is filtered in blocks (``ndconv.dask.adaptive_filter`` does so). 0: an
        image without structure (every magnitude gain 0, as when the largest computed is 0).
    **parameters
        Overrides of the preset: smoothing, relaxation, threshold, anisotropy, blend,
        quadrature_size, reconstruction_size (as the command line's options; ranges in
        docs/adaptive.md).

    Returns
    -------
    output : numpy.ndarray
        (output, report) with `return_report`.
    """
    op = Operand(input)
    if op.on_gpu:
        raise ValueError("adaptive_filter takes host arrays; move the array to the host first")
    _check_adaptive_parameters(parameters)
    scale = _check_scale(scale)
    out = op.output(output)
    target = op.float32_target(out)
    report = _ndconv.adaptive(op.engine_input(float32=True), target, str(preset),
                              dict(parameters), not frames, bool(coarse_orientation),
                              op.settings(engine_mode(mode, 0.0), 0.0, device, threads), scale)
    op.cast_into(target, out)
    out = op.give_back(out)
    return (out, report) if return_report else out


def adaptive_scales(input, *, interior=None, preset="default", frames=False,
                    coarse_orientation=False, mode="nearest", device="auto", threads=0,
                    **parameters):
    """The scales :func:`adaptive_filter` with these arguments divides the structure tensor by:
    its largest eigenvalue (or norm) over the image, one per frame with `frames` (a list). Runs
    the filter's stages up to that only.

    interior : tuple of slices, optional
        Take the largest over these voxels only (every voxel is still read): a block's own voxels
        inside the block read with its halo. The largest over the interiors of blocks that tile an
        image, each read with the halo the structure tensor needs, equals the whole image's bit
        for bit (``ndconv.dask.adaptive_filter`` passes it to every block as `scale`). Not with
        `coarse_orientation`.
    """
    op = Operand(input)
    if op.on_gpu:
        raise ValueError("adaptive_scales takes host arrays; move the array to the host first")
    _check_adaptive_parameters(parameters)
    array = op.engine_input(float32=True)
    shape = np.shape(array)
    start, extent = [], []
    if interior is not None:
        if len(interior) != len(shape):
            raise ValueError(f"interior needs a slice per axis ({len(shape)})")
        for s, n in zip(interior, shape):
            first, stop, step = s.indices(n)
            if step != 1 or stop <= first:
                raise ValueError("interior needs non-empty slices of step 1")
            start.append(first)
            extent.append(stop - first)
    return list(_ndconv.adaptive_scales(array, str(preset), dict(parameters), not frames,
                                        bool(coarse_orientation),
                                        op.settings(engine_mode(mode, 0.0), 0.0, device, threads),
                                        start, extent))


def plan(kind, shape, filter_shape=(), *, filters=1, dtype="float32", device="auto",
         on_gpu=False):
    """The engine's plan for a filter, without running it: the backend and why, the method, the
    kernel family, outputs per thread, memory and the cost model's estimates.

    Parameters
    ----------
    kind : {'dense', 'separable', 'bank', 'median', 'recursive_gaussian'}
    shape : sequence of int
        The input's shape (slowest axis first).
    filter_shape : sequence of int
        Taps per axis (the median's window), in the same order.
    filters : int
        The bank's filter count.
    dtype : dtype
        The input's dtype (what crosses PCIe).
    device : str
        As in :mod:`ndconv.ndimage`.
    on_gpu : bool
        The input is already in GPU memory.

    Returns
    -------
    dict
        Its 'text' is the line the command line prints with --verbose.
    """
    settings = _ndconv.CallSettings()
    settings.device = device
    return _ndconv.plan(kind, [int(n) for n in shape], [int(n) for n in filter_shape],
                        int(filters), np.dtype(dtype).itemsize, settings, bool(on_gpu))


def cuda_status():
    """Whether ndconv was built with CUDA and which GPUs it can use (dict)."""
    return _ndconv.cuda_status()
