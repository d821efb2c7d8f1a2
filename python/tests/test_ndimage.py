"""ndconv.ndimage against scipy.ndimage on fresh random data: every function, 1D to 4D, every
mode, odd and even sizes, origins, axes, dtypes. Linear filters: within 1e-5 of the input's
largest magnitude for float outputs (scipy computes in float64, ndconv in float32); integer
outputs: equal to scipy's (truncating) casts wherever scipy's float64 result is not within 1e-4 of
an integer (where the truncation of two correct results may differ). Medians: bit-identical."""

import numpy as np
import pytest
import scipy.ndimage as sn

from ndconv import ndimage as nd
from conftest import random_array

MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-mirror", "grid-constant",
         "grid-wrap"]
SHAPES = {1: (37,), 2: (19, 23), 3: (9, 11, 13), 4: (5, 6, 7, 8)}
FLOAT_TOLERANCE = 1e-5


def assert_close(ours, theirs, x, scale=1.0):
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    bound = FLOAT_TOLERANCE * max(float(np.abs(x).max()), 1e-30) * scale
    err = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
    assert np.all(np.isfinite(ours))
    assert err.max() <= bound, f"max error {err.max()} > {bound}"


def assert_integer_equal(ours, theirs, exact_float):
    """Integer outputs equal wherever the float64 result is not within 1e-4 of an integer."""
    assert ours.dtype == theirs.dtype
    ambiguous = np.abs(exact_float - np.round(exact_float)) < 1e-4
    differ = (ours != theirs) & ~ambiguous
    assert not differ.any(), f"{differ.sum()} voxels differ, e.g. ours {ours[differ][:5]} scipy " \
                             f"{theirs[differ][:5]} exact {exact_float[differ][:5]}"


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", MODES)
def test_correlate1d_every_mode(rng, ndim, mode):
    x = random_array(rng, SHAPES[ndim], np.float32)
    for size in (1, 2, 3, 4, 7):
        w = rng.standard_normal(size)
        w /= np.abs(w).sum()
        for axis in range(-ndim, ndim):
            for origin in {0, -(size // 2), (size - 1) // 2}:
                kw = dict(axis=axis, mode=mode, cval=1.5, origin=origin)
                assert_close(nd.correlate1d(x, w, **kw), sn.correlate1d(x, w, **kw), x)
                assert_close(nd.convolve1d(x, w, **kw), sn.convolve1d(x, w, **kw), x)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", MODES)
def test_correlate_and_convolve(rng, ndim, mode):
    x = random_array(rng, SHAPES[ndim], np.float32)
    for shape in ((3,) * ndim, tuple(rng.integers(1, 6, size=ndim))):
        w = rng.standard_normal(shape)
        w /= np.abs(w).sum()
        origin = [int(rng.integers(-(n // 2), (n - 1) // 2 + 1)) for n in shape]
        kw = dict(mode=mode, cval=-2.0, origin=origin)
        assert_close(nd.correlate(x, w, **kw), sn.correlate(x, w, **kw), x)
        assert_close(nd.convolve(x, w, **kw), sn.convolve(x, w, **kw), x)


def test_correlate_axes(rng):
    x = random_array(rng, (6, 7, 8, 9), np.float32)
    w = rng.standard_normal((3, 4))
    w /= np.abs(w).sum()
    for axes in [(0, 2), (3, 1), (-1, -2)]:
        assert_close(nd.correlate(x, w, axes=axes), sn.correlate(x, w, axes=axes), x)
        kw = dict(axes=axes, origin=(1, -1))
        assert_close(nd.convolve(x, w, **kw), sn.convolve(x, w, **kw), x)
    w4 = rng.standard_normal((2, 3, 1, 3)) / 10
    kw = dict(axes=(3, 1, 0, 2), origin=(0, 1, 0, -1))
    assert_close(nd.correlate(x, w4, **kw), sn.correlate(x, w4, **kw), x)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", MODES)
def test_gaussian_filter(rng, ndim, mode):
    x = random_array(rng, SHAPES[ndim], np.float32)
    for sigma in (0.7, 1.5, [0.5 + i for i in range(ndim)]):
        kw = dict(mode=mode, cval=0.5)
        assert_close(nd.gaussian_filter(x, sigma, **kw), sn.gaussian_filter(x, sigma, **kw), x)
    for order in (1, 2):
        for axis in range(ndim):
            kw = dict(axis=axis, order=order, mode=mode, cval=0.5)
            assert_close(nd.gaussian_filter1d(x, 1.2, **kw), sn.gaussian_filter1d(x, 1.2, **kw), x)
    kw = dict(mode=mode, radius=2, truncate=3.0)
    assert_close(nd.gaussian_filter(x, 1.1, **kw), sn.gaussian_filter(x, 1.1, **kw), x)


def test_gaussian_filter_per_axis_modes_orders_axes(rng):
    x = random_array(rng, (10, 11, 12), np.float32)
    kw = dict(order=[0, 1, 2], mode=["reflect", "wrap", "constant"], cval=3.0)
    assert_close(nd.gaussian_filter(x, [1, 1.5, 2], **kw),
                 sn.gaussian_filter(x, [1, 1.5, 2], **kw), x)
    for axes in [(0,), (2, 0), (-1,)]:
        assert_close(nd.gaussian_filter(x, 1.3, axes=axes), sn.gaussian_filter(x, 1.3, axes=axes), x)


def test_gaussian_filter_spacing():
    # Sigma in mm with a voxel size: equal to sigma / spacing voxels.
    x = np.random.default_rng(1).standard_normal((8, 9, 10)).astype(np.float32)
    spacing = (2.0, 1.0, 0.5)
    ours = nd.gaussian_filter(x, 2.0, spacing=spacing)
    assert_close(ours, sn.gaussian_filter(x, [1.0, 2.0, 4.0]), x)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", MODES)
def test_uniform_filter(rng, ndim, mode):
    x = random_array(rng, SHAPES[ndim], np.float32)
    for size in (2, 3, 4, [2 + (i % 3) for i in range(ndim)]):
        kw = dict(mode=mode, cval=1.0)
        assert_close(nd.uniform_filter(x, size, **kw), sn.uniform_filter(x, size, **kw), x)
    for axis in range(ndim):
        kw = dict(axis=axis, mode=mode, origin=-1)
        assert_close(nd.uniform_filter1d(x, 4, **kw), sn.uniform_filter1d(x, 4, **kw), x)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", MODES)
def test_derivative_filters(rng, ndim, mode):
    x = random_array(rng, SHAPES[ndim], np.float32)
    kw = dict(mode=mode, cval=2.0)
    for axis in range(ndim):
        assert_close(nd.sobel(x, axis, **kw), sn.sobel(x, axis, **kw), x, 4.0 ** ndim)
        assert_close(nd.prewitt(x, axis, **kw), sn.prewitt(x, axis, **kw), x, 3.0 ** ndim)
    assert_close(nd.laplace(x, **kw), sn.laplace(x, **kw), x, 4.0 * ndim)
    assert_close(nd.gaussian_laplace(x, 1.3, **kw), sn.gaussian_laplace(x, 1.3, **kw), x)
    assert_close(nd.gaussian_gradient_magnitude(x, 1.3, **kw),
                 sn.gaussian_gradient_magnitude(x, 1.3, **kw), x)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16", "float32", "float64"])
def test_dtypes_single_pass(rng, dtype):
    # One pass: the integer cast is scipy's truncation of the same value.
    x = random_array(rng, (12, 13, 14), dtype)
    if np.dtype(dtype).kind == "u":
        w = np.array([0.2, 0.5, 0.3])
    else:
        w = np.array([-0.25, 1.0, 0.5])
    for axis in range(3):
        ours = nd.correlate1d(x, w, axis, mode="nearest")
        theirs = sn.correlate1d(x, w, axis, mode="nearest")
        if np.dtype(dtype).kind == "f":
            assert_close(ours, theirs, x)
        else:
            exact = sn.correlate1d(x.astype(np.float64), w, axis, mode="nearest")
            assert_integer_equal(ours, theirs, exact)


def ambiguous_after_passes(x, passes):
    """Voxels whose integer result may differ between two correct float computations of scipy's
    pass sequence: where a pass's exact value lies within 1e-4 of an integer (truncation can go
    either way), and every voxel whose later footprint holds such a voxel."""
    current = x.astype(np.float64)
    ambiguous = np.zeros(x.shape, bool)
    for axis, weights, mode in passes:
        exact = sn.correlate1d(current, weights, axis, mode=mode)
        ambiguous = sn.maximum_filter1d(ambiguous, len(weights), axis, mode=mode)
        ambiguous |= np.abs(exact - np.round(exact)) < 1e-4
        current = exact.astype(x.dtype).astype(np.float64)
    return ambiguous


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16"])
def test_dtypes_several_passes(rng, dtype):
    # scipy casts after every pass, and so does ndconv: the results are equal wherever no pass
    # left a value at an integer.
    x = random_array(rng, (12, 13, 14), dtype)
    g = sn._filters._gaussian_kernel1d(1.0, 0, 4)[::-1]
    box = np.full(3, 1 / 3)
    cases = [(nd.gaussian_filter(x, 1.0), sn.gaussian_filter(x, 1.0),
              [(a, g, "reflect") for a in range(3)]),
             (nd.uniform_filter(x, 3, mode="wrap"), sn.uniform_filter(x, 3, mode="wrap"),
              [(a, box, "wrap") for a in range(3)])]
    if dtype == "int16":
        cases.append((nd.sobel(x, 1, mode="nearest"), sn.sobel(x, 1, mode="nearest"),
                      [(1, np.array([-1.0, 0, 1])), (0, np.array([1.0, 2, 1])),
                       (2, np.array([1.0, 2, 1]))]))
        cases[-1] = cases[-1][:2] + ([(a, w, "nearest") for a, w in cases[-1][2]],)
    for ours, theirs, passes in cases:
        assert ours.dtype == theirs.dtype
        differ = (ours != theirs) & ~ambiguous_after_passes(x, passes)
        assert not differ.any(), f"{differ.sum()} voxels differ"


def test_output_dtype_and_array(rng):
    x = random_array(rng, (8, 9, 10), np.uint8)
    out = nd.gaussian_filter(x, 1.0, output=np.float32)
    assert out.dtype == np.float32
    assert_close(out, sn.gaussian_filter(x, 1.0, output=np.float32), x)
    target = np.full(x.shape, np.nan, np.float64)
    result = nd.gaussian_filter(x, 1.0, output=target)
    assert result is target
    assert_close(target, sn.gaussian_filter(x, 1.0, output=np.float64), x)


def test_strided_and_negative_strides(rng):
    base = random_array(rng, (20, 22, 24), np.float32)
    for view in (base[::2, 1::3, ::-1], base[::-1, :, 3:-2], base.transpose(2, 0, 1),
                 np.asfortranarray(base)):
        assert_close(nd.gaussian_filter(view, 1.2), sn.gaussian_filter(view, 1.2), view)
        assert_close(nd.correlate(view, np.ones((3, 3, 3)) / 27),
                     sn.correlate(view, np.ones((3, 3, 3)) / 27), view)
        assert np.array_equal(nd.median_filter(view, 3), sn.median_filter(view, 3))


def test_output_aliasing_input(rng):
    x = random_array(rng, (10, 11, 12), np.float32)
    expected = sn.gaussian_filter(x, 1.5)
    y = x.copy()
    nd.gaussian_filter(y, 1.5, output=y)
    assert_close(y, expected, x)


def test_more_than_four_axes_separable(rng):
    x = random_array(rng, (3, 4, 5, 4, 3), np.float32)
    assert_close(nd.gaussian_filter(x, 0.8), sn.gaussian_filter(x, 0.8), x)
    assert_close(nd.uniform_filter(x, 3, mode="wrap"), sn.uniform_filter(x, 3, mode="wrap"), x)
    assert_close(nd.sobel(x, 2), sn.sobel(x, 2), x, 4.0 ** 5)
    with pytest.raises(ValueError, match="1 to 4 axes"):
        nd.correlate(x, np.ones((3,) * 5))
    with pytest.raises(ValueError, match="1 to 4 axes"):
        nd.median_filter(x, 3)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16", "float32"])
def test_median_bit_identical(rng, ndim, mode, dtype):
    x = random_array(rng, SHAPES[ndim], dtype)
    for size in (1, 3, 5, [3 if i % 2 else 1 for i in range(ndim)]):
        kw = dict(size=size, mode=mode, cval=7)
        ours = nd.median_filter(x, **kw)
        theirs = sn.median_filter(x, **kw)
        assert ours.dtype == theirs.dtype
        assert np.array_equal(ours, theirs)
    fp = np.ones((3,) * ndim, bool)
    assert np.array_equal(nd.median_filter(x, footprint=fp, mode=mode),
                          sn.median_filter(x, footprint=fp, mode=mode))


def test_median_axes(rng):
    x = random_array(rng, (6, 7, 8, 9), np.float32)
    for axes in [(0,), (1, 3), (-1, 0)]:
        assert np.array_equal(nd.median_filter(x, 3, axes=axes), sn.median_filter(x, 3, axes=axes))
    for size, axes in [((3, 5), (2, 0)), ((1, 3, 5), (3, 0, 1))]:
        assert np.array_equal(nd.median_filter(x, size, axes=axes),
                              sn.median_filter(x, size, axes=axes))
