"""Running the engine for the package's filters: one dense correlation, or 1D correlation
passes along axes with scipy's semantics (each pass writes the output's dtype, so integer outputs
are cast between passes as scipy casts them). Passes that give the same result fused run as one
separable engine call, which is where ndconv's speed is."""

from __future__ import annotations

import numpy as np

from . import _ndconv
from ._arrays import Operand


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def correlate_dense(op: Operand, weights: np.ndarray, output, mode: str, cval: float,
                    device: str, threads: int):
    """Dense correlation of the operand with `weights` (C order, one axis per input axis, centred
    as the engine centres), cast into `output`."""
    if op.ndim > 4:
        raise ValueError(f"ndconv's dense filters take arrays of 1 to 4 axes; this one has "
                         f"{op.ndim} (separable filters take any number)")
    if op.empty:
        return output
    taps = np.ascontiguousarray(weights, dtype=np.float32)
    target = op.float32_target(output)
    settings = op.settings(mode, cval, device, threads)
    if op.on_gpu:
        _ndconv.correlate_at(op.address(op.engine_input()), op.address(target), op.shape, taps,
                             settings, op.device)
    else:
        _ndconv.correlate(op.engine_input(), taps, target, settings)
    op.cast_into(target, output)
    return output


def _separable_call(op: Operand, source, taps, target, settings) -> None:
    if op.on_gpu:
        _ndconv.correlate_separable_at(op.address(source), op.address(target),
                                       tuple(source.shape), taps, settings, op.device)
    else:
        _ndconv.correlate_separable(source, taps, target, settings)


def _one_pass(op: Operand, source, axis: int, taps: np.ndarray, target, mode: str, cval: float,
              device: str, threads: int) -> None:
    settings = op.settings(mode, cval, device, threads)
    shape = tuple(source.shape)
    if len(shape) <= 4:
        per_axis = [[] for _ in shape]
        per_axis[axis] = taps
        _separable_call(op, source, per_axis, target, settings)
        return
    # More than 4 axes: a pass along one axis is a pass along the middle axis of a 3D array.
    before = int(np.prod(shape[:axis], dtype=np.int64))
    after = int(np.prod(shape[axis + 1:], dtype=np.int64))
    shape3 = (before, shape[axis], after)
    _separable_call(op, source.reshape(shape3), [[], taps, []], target.reshape(shape3), settings)


def correlate_passes(op: Operand, passes, output, cval: float, device: str, threads: int):
    """1D correlations in order, `passes` a list of (axis, taps, engine mode), cast into
    `output` as scipy does after every pass."""
    if op.empty:
        return output
    if not passes:
        op.cast_into(op.engine_input(), output)
        return output
    modes = {mode for _, _, mode in passes}
    float_output = _is_float(op._dtype_of(output.dtype))
    # One fused call where it equals scipy's sequence: float intermediates, one boundary, at most
    # 4 axes, and no constant boundary of a non-zero value (with it, the order of the passes
    # matters where the taps do not sum to 1).
    fused = (len(passes) == 1 or (float_output and len(modes) == 1 and "constant" not in modes)) \
        and op.ndim <= 4 and len({axis for axis, _, _ in passes}) == len(passes)
    if fused:
        taps = [[] for _ in range(op.ndim)]
        for axis, axis_taps, _ in passes:
            taps[axis] = axis_taps
        target = op.float32_target(output)
        _separable_call(op, op.engine_input(), taps, target,
                        op.settings(passes[0][2], cval, device, threads))
        op.cast_into(target, output)
        return output
    source = op.engine_input()
    if op.ndim > 4 and not op.on_gpu:
        source = np.ascontiguousarray(source)
    for axis, taps, mode in passes:
        target = op.empty_float32()
        _one_pass(op, source, axis, taps, target, mode, cval, device, threads)
        if float_output:
            source = target
        else:
            op.cast_into(target, output)
            source = op.readable(output)
            if op.ndim > 4 and not op.on_gpu:
                source = np.ascontiguousarray(source)
    if float_output:
        op.cast_into(source, output)
    return output
