"""scipy.ndimage's argument conventions (sequences per axis, axes, origins, modes), so that
ndconv.ndimage accepts and refuses what scipy does, with Python exceptions that say why."""

from __future__ import annotations

import math
import numbers

import numpy as np

# scipy's mode names and their aliases -> the engine's boundary names (ndconv::to_string(Boundary)).
MODES = {
    "reflect": "reflect", "grid-mirror": "reflect",
    "mirror": "mirror",
    "nearest": "replicate",
    "wrap": "periodic", "grid-wrap": "periodic",
    "constant": "constant", "grid-constant": "constant",
}


def engine_mode(mode, cval) -> str:
    """The engine's boundary for a scipy mode; 'constant' with cval 0 is the engine's zero
    boundary (its fastest: the GPU fills it in hardware)."""
    try:
        name = MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"unknown mode {mode!r}; the modes are {', '.join(MODES)}") from None
    if name == "constant" and float(cval) == 0.0:
        return "zero"
    return name


def check_cval(cval) -> float:
    try:
        value = float(cval)
    except (TypeError, ValueError):
        raise TypeError(f"cval must be a real number, not {cval!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"cval must be finite, not {value}")
    return value


def normalize_sequence(value, rank: int, what: str) -> list:
    """A scalar repeated `rank` times, or a sequence of exactly `rank` values (scipy's rule)."""
    if isinstance(value, str) or not hasattr(value, "__len__"):
        return [value] * rank
    values = list(value)
    if len(values) != rank:
        raise ValueError(f"{what} has {len(values)} values; one per filtered axis ({rank}) or one "
                         f"for all are needed")
    return values


def check_axes(axes, ndim: int) -> tuple:
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, numbers.Integral):
        axes = (axes,)
    out = []
    for axis in axes:
        if not isinstance(axis, numbers.Integral):
            raise TypeError(f"axes must be integers, not {axis!r}")
        if not -ndim <= axis < ndim:
            raise ValueError(f"axis {axis} is out of range for an array of {ndim} axes")
        out.append(int(axis) % ndim)
    if len(set(out)) != len(out):
        raise ValueError("axes must be unique")
    return tuple(out)


def check_origin(origin, size: int) -> int:
    if not isinstance(origin, numbers.Integral):
        raise TypeError(f"origin must be an integer, not {origin!r}")
    if size // 2 + origin < 0 or size // 2 + origin >= size:
        raise ValueError(f"invalid origin {origin} for a filter of {size} taps; it must satisfy "
                         f"-({size} // 2) <= origin <= ({size} - 1) // 2")
    return int(origin)


def check_size(size, what: str = "size") -> int:
    if not isinstance(size, numbers.Integral) or isinstance(size, bool):
        raise TypeError(f"{what} must be an integer, not {size!r}")
    if size < 1:
        raise ValueError(f"{what} must be at least 1, not {size}")
    return int(size)


def check_sigma(sigma, what: str = "sigma") -> float:
    try:
        value = float(sigma)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a real number, not {sigma!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be finite and non-negative, not {value}")
    return value


def centred_taps(weights: np.ndarray, origin: int) -> np.ndarray:
    """1D correlation taps whose centre is index len//2 + origin, as taps of odd length centred
    on their middle (zeros added), which is how the engine centres every filter."""
    if origin == 0:  # the engine centres a filter of k taps at k // 2 too, also for even k
        return weights
    size = len(weights)
    left = size // 2 + origin  # taps before the centre
    right = size - 1 - left
    half = max(left, right)
    out = np.zeros(2 * half + 1, dtype=weights.dtype)
    out[half - left:half - left + size] = weights
    return out


def centred_dense(weights: np.ndarray, origins) -> np.ndarray:
    """centred_taps along every axis of a dense filter."""
    for axis, origin in enumerate(origins):
        if origin == 0:
            continue
        size = weights.shape[axis]
        left = size // 2 + origin
        right = size - 1 - left
        half = max(left, right)
        pad = [(0, 0)] * weights.ndim
        pad[axis] = (half - left, half - right)
        weights = np.pad(weights, pad)
    return weights
