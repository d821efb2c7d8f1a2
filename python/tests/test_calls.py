"""How calls behave: the GIL is released, threads give serial results, Ctrl-C interrupts, outputs
in place, the plan, ndconv's own filters and CPU tensors."""

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.ndimage as sn

import ndconv
from ndconv import ndimage as nd


def test_concurrent_threads_equal_serial():
    rng = np.random.default_rng(2)
    volumes = [rng.standard_normal((20, 24, 28)).astype(np.float32) for _ in range(8)]
    serial = [nd.gaussian_filter(v, 1.5, mode="nearest") for v in volumes]
    serial_median = [nd.median_filter(v, 3, mode="nearest") for v in volumes]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(lambda v: nd.gaussian_filter(v, 1.5, mode="nearest"), volumes))
        threaded_median = list(pool.map(lambda v: nd.median_filter(v, 3, mode="nearest"), volumes))
    for a, b in zip(serial + serial_median, threaded + threaded_median):
        assert np.array_equal(a, b)


def test_gil_released_during_work():
    # One long engine call on one thread: with the GIL held through it, this thread could not run
    # until the call ended; released, it ticks all along.
    x = np.random.default_rng(3).standard_normal((6, 40, 40, 40)).astype(np.float32)
    ticks = 0
    done = threading.Event()
    span = []

    def work():
        t0 = time.monotonic()
        ndconv.adaptive_filter(x, device="cpu", threads=1)
        span.append(time.monotonic() - t0)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.002)
    t.join()
    assert span[0] > 0.05, "the call was too short to tell; make the volume larger"
    assert ticks >= span[0] / 0.02  # at least one tick per 20 ms of the call


def test_ctrl_c_interrupts_adaptive_filter_within_a_second():
    # Large enough that the filtering alone (its filter design is cached by earlier calls) runs
    # for seconds on any machine.
    x = np.random.default_rng(4).standard_normal((12, 64, 64, 64)).astype(np.float32)
    main = threading.get_ident()
    sent = []

    def interrupt():
        time.sleep(0.3)
        sent.append(time.monotonic())
        signal.pthread_kill(main, signal.SIGINT)

    # Python turns SIGINT into KeyboardInterrupt only where it installed its handler, which it
    # does not when the process started with SIGINT ignored (a background job of a script).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            ndconv.adaptive_filter(x, device="cpu")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sent, "the filter ended before the interrupt was sent; make the volume larger"
    assert time.monotonic() - sent[0] < 1.0


def test_cpu_tensor_in_tensor_out():
    torch = pytest.importorskip("torch")
    x = torch.randn(10, 11, 12)
    y = nd.gaussian_filter(x, 1.0, mode="nearest")
    assert isinstance(y, torch.Tensor)
    assert np.allclose(y.numpy(), sn.gaussian_filter(x.numpy(), 1.0, mode="nearest"), atol=1e-5)


def test_plan_text():
    p = ndconv.plan("separable", (64, 64, 64), (9, 9, 9), device="cpu")
    assert p["backend"] == "cpu"
    assert "separable" in p["text"]
    with pytest.raises(ValueError):
        ndconv.plan("fft", (64, 64, 64))


def test_filter_bank_equals_correlate():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 13, 14)).astype(np.float32)
    filters = rng.standard_normal((5, 5, 5, 5)).astype(np.float32) / 30
    outputs = ndconv.filter_bank(x, filters, mode="nearest", device="cpu")
    for f, out in zip(filters, outputs):
        expected = sn.correlate(x.astype(np.float64), f.astype(np.float64), mode="nearest")
        assert np.abs(out - expected).max() < 1e-5 * np.abs(x).max()


@pytest.mark.parametrize("shape", [(40, 40), (24, 24, 24), (4, 16, 16, 16)])
def test_adaptive_filter_denoises(shape):
    rng = np.random.default_rng(6)
    clean = np.zeros(shape, np.float32)
    clean[tuple(slice(n // 4, 3 * n // 4) for n in shape)] = 100
    noisy = clean + rng.standard_normal(shape).astype(np.float32) * 10
    out, report = ndconv.adaptive_filter(noisy, preset="echo", device="cpu", return_report=True)
    assert out.shape == noisy.shape and out.dtype == noisy.dtype
    assert np.all(np.isfinite(out))
    assert np.abs(out - clean).mean() < 0.6 * np.abs(noisy - clean).mean()
    assert report["stage_seconds"]
    frames = ndconv.adaptive_filter(noisy.astype(np.uint8), frames=True, device="cpu")
    assert frames.dtype == np.uint8
