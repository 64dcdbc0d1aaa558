"""
Shared fixtures for the propagator tests.

Every test that takes the ``device`` fixture runs once on the CPU and once on
each kind of GPU that is present. Tests marked ``@pytest.mark.gpu`` are skipped
when no GPU is available. Use ``--cpu-only`` to skip the GPU runs even if a GPU
is present (useful when the GPU is busy with a long job).
"""
import os

import numpy as np
import pytest
import torch

import deepwave


def pytest_addoption(parser):
    parser.addoption("--cpu-only", action="store_true", default=False, help="do not run tests on the GPU")
    parser.addoption("--slow", action="store_true", default=False, help="run slow tests (large models)")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: test requires a CUDA device")
    config.addinivalue_line("markers", "slow: test is slow")


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    skip_slow = pytest.mark.skip(reason="needs --slow")
    no_gpu = config.getoption("--cpu-only") or not torch.cuda.is_available()
    for item in items:
        if "gpu" in item.keywords and no_gpu:
            item.add_marker(skip_gpu)
        if "slow" in item.keywords and not config.getoption("--slow"):
            item.add_marker(skip_slow)


def _devices():
    devs = [torch.device("cpu")]
    if torch.cuda.is_available() and os.environ.get("DEEPWAVE_TEST_CPU_ONLY") != "1":
        devs.append(torch.device("cuda"))
    return devs


DEVICES = _devices()
DTYPES = [torch.float32, torch.float64]


@pytest.fixture(params=DEVICES, ids=[str(d) for d in DEVICES])
def device(request):
    return request.param


@pytest.fixture(params=DTYPES, ids=["f32", "f64"])
def dtype(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1)
    np.random.seed(1)
    yield


@pytest.fixture
def tolerances(dtype, device):
    """GPU kernels use fused multiply-add, so allow a little more slack there."""
    if dtype == torch.float64:
        return dict(rtol=1e-9, atol=1e-12)
    if device.type != "cpu":
        return dict(rtol=2e-4, atol=1e-6)
    return dict(rtol=1e-5, atol=1e-7)


@pytest.fixture
def layered_model(device, dtype):
    ny, nx = 50, 60
    v = torch.ones(ny, nx, device=device, dtype=dtype) * 1500
    v[ny // 2:] = 2500
    return v


@pytest.fixture
def ricker(dtype, device):
    def _make(freq=25, nt=200, dt=0.001, n_shots=2, n_per_shot=1):
        w = deepwave.wavelets.ricker(freq, nt, dt, 1.5 / freq, dtype=dtype)
        return w.repeat(n_shots, n_per_shot, 1).to(device)
    return _make


def direct_arrival(v, dx, dt, src, rec, nt):
    """Analytic 2D direct arrival time in a constant model (used to check the propagators)."""
    dist = torch.linalg.norm((rec - src).to(v.dtype) * dx, dim=-1)
    return dist / v.mean()


@pytest.fixture
def sync(device):
    """Wait for asynchronous kernels before comparing timings or reading counters."""
    def _sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return _sync
