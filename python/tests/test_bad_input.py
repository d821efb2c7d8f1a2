"""Bad input is a Python exception that says what is wrong, never a crash or a wrong answer."""

import numpy as np
import pytest

import ndconv
from ndconv import ndimage as nd


@pytest.fixture
def x():
    return np.random.default_rng(0).standard_normal((8, 9, 10)).astype(np.float32)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, object, bool, "U3"])
def test_wrong_dtype(dtype):
    a = np.zeros((4, 5, 6), dtype=dtype)
    with pytest.raises(TypeError, match="integer and floating-point"):
        nd.gaussian_filter(a, 1.0)
    with pytest.raises(TypeError, match="integer and floating-point"):
        nd.median_filter(a, 3)


def test_zero_dimensional_and_empty():
    with pytest.raises(ValueError, match="0-d"):
        nd.gaussian_filter(np.float32(3.0), 1.0)
    # Empty arrays come back empty, as scipy gives them.
    for f in (lambda a: nd.gaussian_filter(a, 1.0), lambda a: nd.median_filter(a, 3),
              lambda a: nd.correlate(a, np.ones((3, 3)))):
        out = f(np.zeros((0, 4), np.uint8))
        assert out.shape == (0, 4) and out.dtype == np.uint8


@pytest.mark.parametrize("sigma", [float("nan"), -1.0, float("inf"), [1.0, float("nan"), 1.0]])
def test_bad_sigma(x, sigma):
    with pytest.raises(ValueError, match="sigma"):
        nd.gaussian_filter(x, sigma)


@pytest.mark.parametrize("size", [0, -3])
def test_bad_size(x, size):
    with pytest.raises(ValueError, match="size"):
        nd.uniform_filter(x, size)
    with pytest.raises(ValueError, match="size"):
        nd.median_filter(x, size)


def test_bad_output(x):
    with pytest.raises(ValueError, match="shape"):
        nd.gaussian_filter(x, 1.0, output=np.empty((8, 9, 11), np.float32))
    ro = np.empty_like(x)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        nd.gaussian_filter(x, 1.0, output=ro)
    with pytest.raises(TypeError, match="integer and floating-point"):
        nd.gaussian_filter(x, 1.0, output=np.complex64)
    with pytest.raises(TypeError):
        nd.gaussian_filter(x, 1.0, output="not a dtype")


def test_bad_mode_origin_cval(x):
    with pytest.raises(ValueError, match="unknown mode"):
        nd.gaussian_filter(x, 1.0, mode="bogus")
    with pytest.raises(ValueError, match="invalid origin"):
        nd.correlate1d(x, [1, 2, 3], origin=2)
    with pytest.raises(ValueError, match="cval"):
        nd.gaussian_filter(x, 1.0, mode="constant", cval=float("nan"))
    with pytest.raises(ValueError, match="one value per|values"):
        nd.gaussian_filter(x, [1.0, 2.0])


def test_kernel_too_large(x):
    with pytest.raises(ValueError):
        nd.correlate(x, np.ones((33, 3, 3)))
    with pytest.raises(ValueError):
        nd.median_filter(x, 17)


def test_weights_and_axes(x):
    with pytest.raises(ValueError, match="axes"):
        nd.correlate(x, np.ones((3, 3)))
    with pytest.raises(ValueError, match="unique"):
        nd.gaussian_filter(x, 1.0, axes=(0, 0))
    with pytest.raises(ValueError, match="out of range"):
        nd.sobel(x, axis=3)
    with pytest.raises(ValueError, match="finite"):
        nd.correlate1d(x, [1.0, float("nan")])
    with pytest.raises(TypeError, match="complex"):
        nd.correlate(x, np.ones((3, 3, 3), np.complex64))


def test_median_limits(x):
    with pytest.raises(ValueError, match="box"):
        nd.median_filter(x, footprint=np.eye(3, dtype=bool)[:, :, None].repeat(3, 2))
    with pytest.raises(ValueError, match="odd"):
        nd.median_filter(x, 2)
    with pytest.raises(ValueError, match="origin"):
        nd.median_filter(x, 3, origin=1)


def test_device_names(x):
    with pytest.raises(ValueError):
        nd.gaussian_filter(x, 1.0, device="tpu")
    if not ndconv.cuda_status()["usable"]:
        with pytest.raises((ValueError, RuntimeError)):
            nd.gaussian_filter(x, 1.0, device="cuda")


def test_adaptive_parameters(x):
    with pytest.raises(ValueError):
        ndconv.adaptive_filter(x, smoothing=float("nan"))
    with pytest.raises(ValueError):
        ndconv.adaptive_filter(x, anisotropy=1.5)
    with pytest.raises(TypeError, match="unknown adaptive parameters"):
        ndconv.adaptive_filter(x, smoothness=1.0)
    with pytest.raises(ValueError):
        ndconv.adaptive_filter(x, preset="cardiac")


def test_bank_shapes(x):
    with pytest.raises(ValueError, match="shape"):
        ndconv.filter_bank(x, np.ones((3, 3, 3)))
    with pytest.raises(TypeError, match="real"):
        ndconv.filter_bank(x, np.ones((2, 3, 3, 3), np.complex64))
