"""scipy.ndimage's filters on ndconv's engine.

Every function takes scipy.ndimage's arguments, in its order, with its defaults and meaning, and
returns what scipy returns; it accepts numpy arrays (filtered on the CPU, or on a GPU where the
engine's plan says so with ``device="auto"``, or where ``device="cuda"`` asks), and CuPy arrays and
PyTorch tensors (filtered where they live: a CUDA array on its own GPU, on the caller's current
stream, with the result of the same kind on the same device). Three keyword-only arguments are
ndconv's own:

device : {"auto", "cpu", "cuda", "cuda:N"}
    Where host arrays are filtered; ``"auto"`` (the default) lets the engine's cost model choose.
    GPU arrays are always filtered on their own GPU.
threads : int
    CPU threads; 0 (the default) uses every hardware thread.
spacing : sequence of float, optional
    (Gaussian filters) the voxel size per axis: sigmas are then in the same physical unit
    (e.g. mm) and derivatives are taken with respect to physical coordinates.

ndconv computes in float32 (scipy in float64): linear filters agree with scipy to about 1e-6 of
the input's largest magnitude. Integer outputs are cast as scipy casts them (truncated), after
every 1D pass as scipy does. See docs/python.md for what differs.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from . import _ndconv
from ._arrays import Operand
from ._passes import correlate_dense, correlate_passes
from ._scipy_args import (centred_dense, centred_taps, check_axes, check_cval, check_origin,
                          check_sigma, check_size, engine_mode, normalize_sequence)

__all__ = [
    "correlate", "convolve", "correlate1d", "convolve1d", "gaussian_filter", "gaussian_filter1d",
    "uniform_filter", "uniform_filter1d", "median_filter", "gaussian_gradient_magnitude",
    "gaussian_laplace", "sobel", "prewitt", "laplace",
]


def _weights_1d(weights) -> np.ndarray:
    w = np.asarray(weights)
    if w.dtype.kind == "c":
        raise TypeError("ndconv does not filter with complex weights")
    w = w.astype(np.float64)
    if w.ndim != 1:
        raise ValueError(f"weights must be one-dimensional, not of {w.ndim} axes")
    if w.size == 0:
        raise ValueError("weights must hold at least one value")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite")
    return w


def _axis(axis, ndim: int) -> int:
    return check_axes((axis,), ndim)[0]


# ---- correlation and convolution -------------------------------------------------------------


def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
                device="auto", threads=0):
    """Correlate an array along one axis with 1D weights (scipy.ndimage.correlate1d).

    Parameters
    ----------
    input : array_like
        The array to filter: numpy, CuPy or PyTorch, 1 or more axes.
    weights : array_like
        1D correlation taps.
    axis : int, optional
        The axis to filter along (default: the last).
    output : array or dtype, optional
        Where to write the result, or its dtype (default: the input's).
    mode : {'reflect', 'constant', 'nearest', 'mirror', 'wrap', 'grid-mirror', 'grid-constant', 'grid-wrap'}
        What lies beyond the array's edges.
    cval : float
        The value outside the array with ``mode='constant'``.
    origin : int
        Shift of the filter's centre (0: ``len(weights) // 2``).
    device, threads
        See the module's documentation.

    Returns
    -------
    output : array
        The filtered array, of the input's kind and device.
    """
    op = Operand(input)
    w = _weights_1d(weights)
    ax = _axis(axis, op.ndim)
    origin = check_origin(origin, len(w))
    cval = check_cval(cval)
    out = op.output(output)
    correlate_passes(op, [(ax, centred_taps(w, origin).astype(np.float32),
                           engine_mode(mode, cval))], out, cval, device, threads)
    return op.give_back(out)


def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
               device="auto", threads=0):
    """Convolve an array along one axis with 1D weights (scipy.ndimage.convolve1d).

    Parameters and result as :func:`correlate1d`; the weights are flipped.
    """
    w = _weights_1d(weights)[::-1]
    if not isinstance(origin, numbers.Integral):
        raise TypeError(f"origin must be an integer, not {origin!r}")
    origin = -origin
    if not len(w) & 1:
        origin -= 1
    return correlate1d(input, w, axis, output, mode, cval, origin, device=device, threads=threads)


def _correlate_nd(input, weights, output, mode, cval, origin, convolution, axes, device, threads):
    op = Operand(input)
    w = np.asarray(weights)
    if w.dtype.kind == "c":
        raise TypeError("ndconv does not filter with complex weights")
    w = w.astype(np.float64)
    if not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite")
    axes = check_axes(axes, op.ndim)
    if w.ndim != len(axes):
        raise ValueError(f"the weights have {w.ndim} axes; the filtered axes are {len(axes)}")
    if w.size == 0:
        raise ValueError("weights must hold at least one value")
    # scipy's rules: the weights' axes go to the filtered axes in increasing order (the others get
    # one tap), the origins to the axes in the order given.
    if len(axes) < op.ndim:
        w = np.expand_dims(w, tuple(ax for ax in range(op.ndim) if ax not in axes))
    origins = [0] * op.ndim
    for o, ax in zip(normalize_sequence(origin, len(axes), "origin"), axes):
        if not isinstance(o, numbers.Integral):
            raise TypeError(f"origin must be an integer, not {o!r}")
        origins[ax if len(axes) < op.ndim else axes.index(ax)] = int(o)
    if convolution:
        w = w[(slice(None, None, -1),) * w.ndim]
        for i in range(len(origins)):
            origins[i] = -origins[i]
            if not w.shape[i] & 1:
                origins[i] -= 1
    for o, size in zip(origins, w.shape):
        check_origin(o, size)
    full_origins = origins
    cval = check_cval(cval)
    if isinstance(mode, (list, tuple)):
        raise ValueError("correlate and convolve take one mode for all axes")
    out = op.output(output)
    correlate_dense(op, centred_dense(w, full_origins), out, engine_mode(mode, cval), cval, device,
                    threads)
    return op.give_back(out)


def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
              device="auto", threads=0):
    """Multidimensional correlation (scipy.ndimage.correlate).

    Parameters
    ----------
    input : array_like
        The array to filter, 1 to 4 axes.
    weights : array_like
        The filter, with one axis per filtered axis (every axis of the input unless `axes`).
    output, mode, cval
        As :func:`correlate1d`.
    origin : int or sequence of int
        Shift of the filter's centre per axis.
    axes : tuple of int, optional
        The axes the weights apply to.
    device, threads
        See the module's documentation.

    Returns
    -------
    output : array
    """
    return _correlate_nd(input, weights, output, mode, cval, origin, False, axes, device, threads)


def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
             device="auto", threads=0):
    """Multidimensional convolution (scipy.ndimage.convolve): :func:`correlate` with the weights
    flipped along every axis.
    """
    return _correlate_nd(input, weights, output, mode, cval, origin, True, axes, device, threads)


# ---- Gaussian filters ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _engine_gaussian_taps(sigma: float, order: int, truncate: float) -> np.ndarray:
    taps = np.asarray(_ndconv.gaussian_derivative_taps(sigma, order, truncate), dtype=np.float32)
    taps.flags.writeable = False  # shared by every call with these arguments
    return taps


def _gaussian_taps(sigma: float, order: int, truncate: float, radius) -> np.ndarray:
    if not isinstance(order, numbers.Integral) or not 0 <= order <= 2:
        raise ValueError(f"order must be 0, 1 or 2, not {order!r} (ndconv's derivative filters "
                         f"go to the second)")
    try:
        truncate = float(truncate)
    except (TypeError, ValueError):
        raise TypeError(f"truncate must be a real number, not {truncate!r}") from None
    if radius is not None:
        if not isinstance(radius, numbers.Integral) or radius < 0:
            raise ValueError("radius must be a nonnegative integer")
        # The engine takes round(truncate * sigma) taps on each side.
        truncate = (int(radius) + 0.25) / sigma
    elif not np.isfinite(truncate) or truncate <= 0:
        raise ValueError(f"truncate must be finite and positive, not {truncate}")
    return _engine_gaussian_taps(sigma, int(order), truncate)


def _spacing(spacing, ndim: int):
    if spacing is None:
        return [1.0] * ndim
    values = [float(s) for s in normalize_sequence(spacing, ndim, "spacing")]
    if not all(np.isfinite(s) and s > 0 for s in values):
        raise ValueError(f"spacing must be finite and positive, not {values}")
    return values


def _gaussian_passes(op, sigma, order, mode, cval, truncate, radius, axes, spacing):
    axes = check_axes(axes, op.ndim)
    n = len(axes)
    orders = normalize_sequence(order, n, "order")
    sigmas = [check_sigma(s) for s in normalize_sequence(sigma, n, "sigma")]
    modes = normalize_sequence(mode, n, "mode")
    radii = normalize_sequence(radius, n, "radius")
    spacings = _spacing(spacing, op.ndim)
    passes = []
    for ax, s, o, m, r in zip(axes, sigmas, orders, modes, radii):
        s_vox = s / spacings[ax]
        if s_vox <= 1e-15:
            continue
        taps = _gaussian_taps(s_vox, o, truncate, r)
        if o:
            taps = (taps / np.float32(spacings[ax] ** o)).astype(np.float32)
        passes.append((ax, taps, engine_mode(m, cval)))
    return passes


def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0,
                      truncate=4.0, *, radius=None, device="auto", threads=0):
    """1D Gaussian filter, or its first or second derivative (scipy.ndimage.gaussian_filter1d).

    Parameters
    ----------
    input : array_like
    sigma : float
        Standard deviation in voxels (> 0).
    axis : int
    order : {0, 1, 2}
        Derivative order.
    output, mode, cval
        As :func:`correlate1d`.
    truncate : float
        Taps up to ``round(truncate * sigma)`` voxels from the centre.
    radius : int, optional
        The taps' radius, instead of `truncate`.
    device, threads
        See the module's documentation.

    Returns
    -------
    output : array
    """
    op = Operand(input)
    s = check_sigma(sigma)
    if s == 0:
        raise ValueError("sigma must be positive")
    ax = _axis(axis, op.ndim)
    cval = check_cval(cval)
    out = op.output(output)
    passes = [(ax, _gaussian_taps(s, order, truncate, radius), engine_mode(mode, cval))]
    correlate_passes(op, passes, out, cval, device, threads)
    return op.give_back(out)


def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                    *, radius=None, axes=None, spacing=None, device="auto", threads=0):
    """Multidimensional Gaussian filter (scipy.ndimage.gaussian_filter).

    Parameters
    ----------
    input : array_like
        Any number of axes (1 to 4 in one fused pass; more, one pass per axis).
    sigma : float or sequence of float
        Standard deviation per filtered axis, in voxels (in `spacing`'s unit where given); 0 skips
        an axis.
    order : int or sequence of int
        Derivative order per axis (0, 1 or 2).
    output : array or dtype, optional
    mode : str or sequence of str
        Per axis, as :func:`correlate1d`.
    cval, truncate, radius
        As :func:`gaussian_filter1d`.
    axes : tuple of int, optional
        The axes to filter (default: all).
    spacing, device, threads
        See the module's documentation.

    Returns
    -------
    output : array
    """
    op = Operand(input)
    cval = check_cval(cval)
    passes = _gaussian_passes(op, sigma, order, mode, cval, truncate, radius, axes, spacing)
    out = op.output(output)
    correlate_passes(op, passes, out, cval, device, threads)
    return op.give_back(out)


# ---- uniform filters ------------------------------------------------------------------------------


def _uniform_taps(size: int, origin: int) -> np.ndarray:
    return centred_taps(np.full(size, 1.0 / size), check_origin(origin, size)).astype(np.float32)


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0, *,
                     device="auto", threads=0):
    """1D mean over `size` voxels (scipy.ndimage.uniform_filter1d).

    Parameters
    ----------
    input : array_like
    size : int
        Voxels averaged (>= 1).
    axis, output, mode, cval, origin
        As :func:`correlate1d`.
    device, threads
        See the module's documentation.

    Returns
    -------
    output : array
    """
    op = Operand(input)
    size = check_size(size)
    ax = _axis(axis, op.ndim)
    cval = check_cval(cval)
    out = op.output(output)
    correlate_passes(op, [(ax, _uniform_taps(size, origin), engine_mode(mode, cval))], out, cval,
                     device, threads)
    return op.give_back(out)


def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None,
                   device="auto", threads=0):
    """Multidimensional mean over a box (scipy.ndimage.uniform_filter).

    Parameters
    ----------
    input : array_like
    size : int or sequence of int
        Box size per filtered axis.
    output, mode, cval, origin
        As :func:`correlate1d`; mode and origin may be given per axis.
    axes : tuple of int, optional
    device, threads
        See the module's documentation.

    Returns
    -------
    output : array
    """
    op = Operand(input)
    axes = check_axes(axes, op.ndim)
    n = len(axes)
    sizes = [check_size(s) for s in normalize_sequence(size, n, "size")]
    origins = normalize_sequence(origin, n, "origin")
    modes = normalize_sequence(mode, n, "mode")
    cval = check_cval(cval)
    passes = [(ax, _uniform_taps(s, o), engine_mode(m, cval))
              for ax, s, o, m in zip(axes, sizes, origins, modes) if s > 1]
    out = op.output(output)
    correlate_passes(op, passes, out, cval, device, threads)
    return op.give_back(out)


# ---- derivative filters -------------------------------------------------------------------------


def _edge_filter(input, axis, output, mode, cval, smoothing, device, threads):
    op = Operand(input)
    ax = _axis(axis, op.ndim)
    modes = normalize_sequence(mode, op.ndim, "mode")
    cval = check_cval(cval)
    passes = [(ax, np.array([-1, 0, 1], np.float32), engine_mode(modes[ax], cval))]
    passes += [(i, np.array(smoothing, np.float32), engine_mode(modes[i], cval))
               for i in range(op.ndim) if i != ax]
    out = op.output(output)
    correlate_passes(op, passes, out, cval, device, threads)
    return op.give_back(out)


def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0, *, device="auto", threads=0):
    """Sobel filter: the central difference along `axis`, [1, 2, 1] smoothing along the others
    (scipy.ndimage.sobel).

    Parameters
    ----------
    input : array_like
    axis : int
    output, mode, cval
        As :func:`correlate1d`; mode may be given per axis.
    device, threads
        See the module's documentation.

    Returns
    -------
    output : array
    """
    return _edge_filter(input, axis, output, mode, cval, [1, 2, 1], device, threads)


def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0, *, device="auto", threads=0):
    """Prewitt filter: the central difference along `axis`, [1, 1, 1] along the others
    (scipy.ndimage.prewitt). Parameters as :func:`sobel`.
    """
    return _edge_filter(input, axis, output, mode, cval, [1, 1, 1], device, threads)


def _square_in_place(op, a):
    if op.library == "torch":
        a.mul_(a)
    else:
        _array_module(op).multiply(a, a, out=a)


def _sum_over_axes(op, output, axes, modes, derivative, square: bool):
    """scipy's generic_laplace / generic_gradient_magnitude: the first derivative into the output,
    then each other one in the output's dtype added to it (squared for the gradient, whose sum's
    square root is cast back as numpy casts)."""
    derivative(axes[0], output, modes[0])
    if square:
        _square_in_place(op, output)
    for ax, mode in zip(axes[1:], modes[1:]):
        term = op.output(op._dtype_of(output.dtype))
        derivative(ax, term, mode)
        if square:
            _square_in_place(op, term)
        if op.library == "torch":
            output += term
        else:
            _array_module(op).add(output, term, out=output, casting="unsafe")
    if square:
        if op.library == "torch":
            exact = output if output.dtype.is_floating_point else output.to(op.torch.float64)
            output.copy_(exact.sqrt())
        else:
            _array_module(op).sqrt(output, out=output, casting="unsafe")


def _array_module(op):
    """numpy, or CuPy for CuPy arrays."""
    if op.library == "cupy":
        import cupy

        return cupy
    return np


def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None, device="auto", threads=0):
    """Laplace filter: the sum over the axes of [1, -2, 1] along each (scipy.ndimage.laplace).

    Parameters
    ----------
    input : array_like
    output, mode, cval
        As :func:`correlate1d`; mode may be given per axis.
    axes : tuple of int, optional
    device, threads
        See the module's documentation.

    Returns
    -------
    output : array
    """
    op = Operand(input)
    axes = check_axes(axes, op.ndim)
    cval = check_cval(cval)
    out = op.output(output)
    if not axes:
        op.cast_into(op.engine_input(), out)
        return op.give_back(out)
    modes = normalize_sequence(mode, len(axes), "mode")
    taps = np.array([1, -2, 1], np.float32)

    def second(ax, target, m):
        correlate_passes(op, [(ax, taps, engine_mode(m, cval))], target, cval, device, threads)

    _sum_over_axes(op, out, axes, modes, second, square=False)
    return op.give_back(out)


def _gaussian_sum(input, sigma, output, mode, cval, axes, spacing, device, threads, order,
                  square, kwargs):
    op = Operand(input)
    axes = check_axes(axes, op.ndim)
    cval = check_cval(cval)
    truncate = kwargs.pop("truncate", 4.0)
    radius = kwargs.pop("radius", None)
    if kwargs:
        raise TypeError(f"unexpected arguments: {', '.join(kwargs)}")
    sigmas = normalize_sequence(sigma, len(axes), "sigma")
    full_sigma = [0.0] * op.ndim
    for s, ax in zip(sigmas, axes):
        full_sigma[ax] = s
    out = op.output(output)
    if not axes:
        op.cast_into(op.engine_input(), out)
        return op.give_back(out)
    modes = normalize_sequence(mode, len(axes), "mode")

    def derivative(ax, target, m):
        orders = [0] * op.ndim
        orders[ax] = order
        passes = _gaussian_passes(op, full_sigma, orders, m, cval, truncate, radius, None,
                                  spacing)
        correlate_passes(op, passes, target, cval, device, threads)

    _sum_over_axes(op, out, axes, modes, derivative, square)
    return op.give_back(out)


def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None,
                     spacing=None, device="auto", threads=0, **kwargs):
    """Laplacian of Gaussian (scipy.ndimage.gaussian_laplace): the sum over the axes of the
    Gaussian's second derivative along each.

    Parameters
    ----------
    input : array_like
    sigma : float or sequence of float
        Per filtered axis.
    output, mode, cval
        As :func:`gaussian_filter`.
    axes : tuple of int, optional
    spacing, device, threads
        See the module's documentation.
    **kwargs
        `truncate` and `radius`, as :func:`gaussian_filter`.

    Returns
    -------
    output : array
    """
    return _gaussian_sum(input, sigma, output, mode, cval, axes, spacing, device, threads, 2,
                         False, kwargs)


def gaussian_gradient_magnitude(input, sigma, output=None, mode="reflect", cval=0.0, *,
                                axes=None, spacing=None, device="auto", threads=0, **kwargs):
    """Gradient magnitude with Gaussian derivatives (scipy.ndimage.gaussian_gradient_magnitude).
    Parameters as :func:`gaussian_laplace`.
    """
    return _gaussian_sum(input, sigma, output, mode, cval, axes, spacing, device, threads, 1,
                         True, kwargs)


# ---- median --------------------------------------------------------------------------------------


def median_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0,
                  origin=0, *, axes=None, device="auto", threads=0):
    """Median over a box window (scipy.ndimage.median_filter).

    The engine's median takes windows of odd size up to 15 per axis (a footprint must be a box
    of True values of odd sizes, or no window) and origin 0. The result is bit-identical to scipy's
    for integer inputs up to 2**24 and float32 inputs; float64 inputs are rounded to float32.

    Parameters
    ----------
    input : array_like
        1 to 4 axes.
    size : int or sequence of int
        Window size per filtered axis.
    footprint : array of bool, optional
        Instead of `size`: a box of True values.
    output, mode, cval
        As :func:`correlate1d` (one mode for all axes).
    origin : int or sequence of int
        0 only.
    axes : tuple of int, optional
    device, threads
        See the module's documentation.

    Returns
    -------
    output : array
    """
    op = Operand(input)
    axes = check_axes(axes, op.ndim)
    if footprint is not None:
        fp = np.asarray(footprint)
        if size is not None:
            import warnings

            warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=2)
        if fp.ndim != len(axes):
            raise ValueError(f"the footprint has {fp.ndim} axes; the filtered axes are {len(axes)}")
        if fp.size == 0 or not fp.astype(bool).all():
            raise ValueError("ndconv's median takes box windows: a footprint of all True values")
        sizes = list(fp.shape)
    elif size is None:
        raise ValueError("no footprint or filter size provided")
    else:
        sizes = [check_size(s) for s in normalize_sequence(size, len(axes), "size")]
    for o in normalize_sequence(origin, len(axes), "origin"):
        if o != 0:
            raise ValueError("ndconv's median takes origin 0 only")
    if any(s % 2 == 0 for s in sizes):
        raise ValueError(f"ndconv's median takes windows of odd sizes, not {sizes}")
    if op.ndim > 4:
        raise ValueError(f"ndconv's median filters arrays of 1 to 4 axes; this one has {op.ndim}")
    if isinstance(mode, (list, tuple)):
        raise ValueError("median_filter takes one mode for all axes")
    cval = check_cval(cval)
    # The window is a footprint: scipy gives its axes to the filtered axes in increasing order.
    radius = [0] * op.ndim
    for ax, s in zip(sorted(axes), sizes):
        radius[ax] = s // 2
    out = op.output(output)
    if op.empty:
        return op.give_back(out)
    target = op.float32_target(out)
    settings = op.settings(engine_mode(mode, cval), cval, device, threads)
    if op.on_gpu:
        _ndconv.median_at(op.address(op.engine_input()), op.address(target), op.shape, radius,
                          settings, op.device)
    else:
        _ndconv.median(op.engine_input(float32=True), radius, target, settings)
    op.cast_into(target, out)
    return op.give_back(out)
