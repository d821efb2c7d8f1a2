"""CuPy arrays and PyTorch CUDA tensors: filtered on their own GPU, on the caller's current stream,
returned as the same kind on the same device; out= on the device; concurrent threads; a second
GPU where there is one. Skipped without a usable GPU and CuPy or PyTorch (they run on the lent
GPU: docs/records/)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.ndimage as sn

import ndconv
from ndconv import ndimage as nd
from conftest import gpu_libraries

LIBRARIES = gpu_libraries()
pytestmark = pytest.mark.skipif(not LIBRARIES, reason="no usable GPU with CuPy or PyTorch")


def to_device(library, array, device=0):
    if library == "cupy":
        import cupy

        with cupy.cuda.Device(device):
            return cupy.asarray(array)
    import torch

    return torch.as_tensor(array, device=f"cuda:{device}")


def to_host(library, array):
    if library == "cupy":
        import cupy

        return cupy.asnumpy(array)
    return array.cpu().numpy()


def same_kind(library, array, device=0):
    if library == "cupy":
        import cupy

        return isinstance(array, cupy.ndarray) and array.device.id == device
    import torch

    return isinstance(array, torch.Tensor) and array.device == torch.device(f"cuda:{device}")


def close(ours, theirs, x):
    return np.abs(ours.astype(np.float64) - theirs).max() <= 1e-5 * np.abs(x).max()


CASES = [
    ("gaussian_filter", lambda m, a: m.gaussian_filter(a, 1.5, mode="nearest")),
    ("gaussian_filter reflect", lambda m, a: m.gaussian_filter(a, [1, 2, 0.5], mode="reflect")),
    ("uniform_filter", lambda m, a: m.uniform_filter(a, 5, mode="wrap")),
    ("correlate", lambda m, a: m.correlate(a, np.arange(27.0).reshape(3, 3, 3) / 351, mode="mirror")),
    ("sobel", lambda m, a: m.sobel(a, 0, mode="constant", cval=2.0)),
    ("gaussian_gradient_magnitude", lambda m, a: m.gaussian_gradient_magnitude(a, 1.0)),
    ("median_filter", lambda m, a: m.median_filter(a, 3, mode="nearest")),
]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_device_arrays_match_scipy(library, name, call):
    x = np.random.default_rng(9).standard_normal((30, 40, 50)).astype(np.float32)
    result = call(nd, to_device(library, x))
    assert same_kind(library, result)
    expected = call(sn, x)
    ours = to_host(library, result)
    if name == "median_filter":
        assert np.array_equal(ours, expected)
    else:
        assert close(ours, expected, x)


@pytest.mark.parametrize("library", LIBRARIES)
def test_uint8_on_device_keeps_dtype(library):
    x = np.random.default_rng(10).integers(0, 256, (20, 30, 40)).astype(np.uint8)
    result = nd.median_filter(to_device(library, x), 3, mode="nearest")
    assert np.array_equal(to_host(library, result), sn.median_filter(x, 3, mode="nearest"))


@pytest.mark.parametrize("library", LIBRARIES)
def test_out_on_device_and_non_blocking_stream(library):
    x = np.random.default_rng(11).standard_normal((64, 64, 64)).astype(np.float32)
    expected = sn.gaussian_filter(x, 2.0, mode="nearest")
    if library == "cupy":
        import cupy

        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            a = cupy.asarray(x)
            out = cupy.empty_like(a)
            result = nd.gaussian_filter(a, 2.0, mode="nearest", output=out)
            assert result is out
            host = cupy.asnumpy(out, stream=stream)
        stream.synchronize()
    else:
        import torch

        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            a = torch.as_tensor(x, device="cuda")
            out = torch.empty_like(a)
            result = nd.gaussian_filter(a, 2.0, mode="nearest", output=out)
            assert result is out
            host = out.cpu().numpy()
    assert close(host, expected, x)


@pytest.mark.parametrize("library", LIBRARIES)
def test_concurrent_threads_on_device(library):
    rng = np.random.default_rng(12)
    volumes = [rng.standard_normal((32, 48, 64)).astype(np.float32) for _ in range(8)]
    expected = [sn.gaussian_filter(v, 1.5, mode="nearest") for v in volumes]

    def run(v):
        if library == "cupy":
            import cupy

            with cupy.cuda.Stream(non_blocking=True) as s:
                r = cupy.asnumpy(nd.gaussian_filter(cupy.asarray(v), 1.5, mode="nearest"),
                                 stream=s)
                s.synchronize()
                return r
        import torch

        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            r = nd.gaussian_filter(torch.as_tensor(v, device="cuda"), 1.5, mode="nearest")
            return r.cpu().numpy()

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, volumes))
    for r, e, v in zip(results, expected, volumes):
        assert close(r, e, v)


@pytest.mark.parametrize("library", LIBRARIES)
def test_device_errors(library):
    x = to_device(library, np.zeros((8, 9, 10), np.float32))
    with pytest.raises(ValueError, match="cpu"):
        nd.gaussian_filter(x, 1.0, device="cpu")
    with pytest.raises(TypeError):
        nd.gaussian_filter(x, 1.0, output=np.empty((8, 9, 10), np.float32))
    with pytest.raises(ValueError, match="host"):
        ndconv.adaptive_filter(x)


@pytest.mark.skipif(len(ndconv.cuda_status()["devices"]) < 2, reason="one GPU")
@pytest.mark.parametrize("library", LIBRARIES)
def test_second_device(library):
    x = np.random.default_rng(13).standard_normal((20, 30, 40)).astype(np.float32)
    result = nd.gaussian_filter(to_device(library, x, 1), 1.0, mode="nearest")
    assert same_kind(library, result, 1)
    assert close(to_host(library, result), sn.gaussian_filter(x, 1.0, mode="nearest"), x)
    with pytest.raises(ValueError, match="GPU|cuda"):
        nd.gaussian_filter(to_device(library, x, 1), 1.0, output=to_device(library, x, 0))


@pytest.mark.parametrize("mode", ["constant", "nearest", "mirror", "wrap"])
def test_numpy_over_a_device_list_is_one_gpus(mode):
    # A host array on a device list: its output in slabs over the GPUs (on a one-GPU machine the
    # list repeats GPU 0: two slabs on one GPU), bit for bit one GPU's.
    gpus = [d["index"] for d in ndconv.cuda_status()["devices"]]
    devices = "cuda:all" if len(gpus) > 1 else None
    x = np.random.default_rng(15).standard_normal((30, 20, 24, 28)).astype(np.float32)
    w = np.random.default_rng(16).standard_normal((5, 3, 3, 3)).astype(np.float32)
    one = nd.correlate(x, w, mode=mode, device="cuda:0")
    if devices is None:
        pytest.skip("one GPU: the engine's tests cover two slabs on one GPU")
    assert np.array_equal(nd.correlate(x, w, mode=mode, device=devices).view(np.uint32),
                          one.view(np.uint32))
    g = nd.gaussian_filter(x, 1.5, mode=mode, device="cuda:0")
    assert np.array_equal(nd.gaussian_filter(x, 1.5, mode=mode, device=devices).view(np.uint32),
                          g.view(np.uint32))


def test_numpy_through_the_gpu():
    x = np.random.default_rng(14).standard_normal((40, 50, 60)).astype(np.float32)
    ours = nd.correlate(x, np.ones((7, 7, 7)) / 343, mode="nearest", device="cuda")
    assert isinstance(ours, np.ndarray)
    assert close(ours, sn.correlate(x, np.ones((7, 7, 7)) / 343, mode="nearest"), x)
