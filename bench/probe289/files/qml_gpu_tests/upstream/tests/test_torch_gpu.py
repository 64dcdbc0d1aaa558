"""GPU consistency tests: the same circuits on CPU and CUDA must agree.

Run only these with ``pytest -m gpu``; they are skipped on machines
without a CUDA device.
"""

import math

import numpy as np
import pytest
import torch

import pennylane as qml
import torchquantum as tq
import torchquantum.functional as tqf

CUDA = torch.cuda.is_available()
requires_gpu = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")

DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, requires_gpu])]


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(1234)
    np.random.seed(1234)
    yield
    if CUDA:
        torch.cuda.empty_cache()


def random_circuit(qdev, n_wires, depth, params):
    k = 0
    for _ in range(depth):
        for w in range(n_wires):
            tqf.rx(qdev, wires=w, params=params[:, k])
            tqf.ry(qdev, wires=w, params=params[:, k + 1])
            k += 2
        for w in range(n_wires - 1):
            tqf.cnot(qdev, wires=[w, w + 1])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n_wires", [2, 5, 9])
def test_statevector_normalised(device, n_wires):
    bsz, depth = 8, 3
    params = torch.rand(bsz, 2 * n_wires * depth, device=device) * 2 * math.pi
    qdev = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device=device)
    random_circuit(qdev, n_wires, depth, params)
    norms = qdev.get_probs_1d().sum(-1)
    torch.testing.assert_close(norms, torch.ones_like(norms), atol=1e-5, rtol=0)


@pytest.mark.gpu
@requires_gpu
@pytest.mark.parametrize("n_wires", [3, 6, 10])
def test_cpu_cuda_agree(n_wires):
    bsz, depth = 4, 4
    params = torch.rand(bsz, 2 * n_wires * depth) * 2 * math.pi

    q_cpu = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device="cpu")
    random_circuit(q_cpu, n_wires, depth, params)

    q_gpu = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device="cuda")
    random_circuit(q_gpu, n_wires, depth, params.cuda())

    torch.testing.assert_close(q_gpu.get_states_1d().cpu(), q_cpu.get_states_1d(), atol=2e-6, rtol=1e-5)


@pytest.mark.gpu
@requires_gpu
def test_gradients_agree():
    n_wires, depth, bsz = 4, 2, 3
    base = torch.rand(bsz, 2 * n_wires * depth) * 2 * math.pi
    grads = {}
    for dev in ("cpu", "cuda"):
        params = base.clone().to(dev).requires_grad_(True)
        qdev = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device=dev)
        random_circuit(qdev, n_wires, depth, params)
        loss = qdev.get_probs_1d()[:, 0].sum()
        loss.backward()
        grads[dev] = params.grad.detach().cpu()
    torch.testing.assert_close(grads["cuda"], grads["cpu"], atol=1e-5, rtol=1e-4)


@pytest.mark.gpu
@requires_gpu
def test_pennylane_torch_device_cuda():
    n = 3
    dev = qml.device("default.qubit.torch", wires=n, torch_device="cuda")

    @qml.qnode(dev, interface="torch", diff_method="backprop")
    def circuit(x):
        for i in range(n):
            qml.RY(x[i], wires=i)
        qml.CNOT(wires=[0, 1])
        qml.CNOT(wires=[1, 2])
        return qml.expval(qml.PauliZ(2))

    x = torch.tensor([0.1, 0.2, 0.3], device="cuda", requires_grad=True)
    out = circuit(x)
    out.backward()
    assert out.device.type == "cuda"
    assert x.grad is not None and torch.isfinite(x.grad).all()


@pytest.mark.gpu
@requires_gpu
def test_lightning_gpu_matches_default():
    pytest.importorskip("pennylane_lightning")
    n = 6
    try:
        dev_gpu = qml.device("lightning.gpu", wires=n)
    except qml.DeviceError:
        pytest.skip("lightning.gpu not installed")
    dev_ref = qml.device("default.qubit", wires=n)

    def make(dev):
        @qml.qnode(dev)
        def c(w):
            qml.StronglyEntanglingLayers(w, wires=range(n))
            return qml.state()

        return c

    w = np.random.random(qml.StronglyEntanglingLayers.shape(n_layers=2, n_wires=n))
    np.testing.assert_allclose(make(dev_gpu)(w), make(dev_ref)(w), atol=1e-6)


@pytest.mark.gpu
@requires_gpu
def test_memory_released_after_reset():
    n_wires, bsz = 18, 16
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    qdev = tq.QuantumDevice(n_wires=n_wires, bsz=bsz, device="cuda")
    qdev.reset_states(bsz)
    peak = torch.cuda.max_memory_allocated()
    del qdev
    torch.cuda.empty_cache()  # give the blocks back to the driver
    after = torch.cuda.memory_allocated()
    assert peak - before >= bsz * 2**n_wires * 8
    assert after - before < 1 << 20
