"""Shared helpers of the package's tests: fresh random data (the seed is printed on failure), and
which GPU array libraries this machine can run."""

import os
import random

import numpy as np
import pytest

import ndconv

SEED = int(os.environ.get("NDCONV_TEST_SEED", random.SystemRandom().randrange(2**32)))


def pytest_report_header(config):
    return f"ndconv {ndconv.__version__}, random seed {SEED} (NDCONV_TEST_SEED to repeat)"


@pytest.fixture
def rng(request):
    # One generator per test, derived from the run's seed and the test's name.
    return np.random.default_rng([SEED, abs(hash(request.node.nodeid)) % 2**32])


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    low, high = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)


def gpu_usable():
    status = ndconv.cuda_status()
    return status["compiled"] and status["usable"]


def gpu_libraries():
    """'cupy' and/or 'torch' where the module imports and a GPU is usable."""
    found = []
    if not gpu_usable():
        return found
    try:
        import cupy  # noqa: F401

        found.append("cupy")
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            found.append("torch")
    except ImportError:
        pass
    return found
