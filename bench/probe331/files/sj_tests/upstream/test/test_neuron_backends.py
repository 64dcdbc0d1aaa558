"""
Consistency tests between the ``torch`` and ``cupy`` backends of multi-step neurons.

Run with ``pytest -q test/test_neuron_backends.py``. CUDA-only tests are skipped automatically on CPU-only machines
(e.g. the GitHub Actions runners).
"""
import pytest
import torch

from spikingjelly.activation_based import neuron, functional, surrogate, layer

try:
    import cupy  # noqa: F401
    HAS_CUPY = True
except ImportError:
    HAS_CUPY = False

DEVICES = ['cpu']
if torch.cuda.is_available():
    DEVICES.append('cuda:0')

requires_cupy = pytest.mark.skipif(not (HAS_CUPY and torch.cuda.is_available()),
                                   reason='the cupy backend needs cupy and a CUDA device')


def _fbptt(net, x_seq):
    x_seq = x_seq.detach().clone().requires_grad_(True)
    y_seq = net(x_seq)
    (y_seq * torch.arange(y_seq.numel(), device=y_seq.device, dtype=y_seq.dtype).view_as(y_seq)).sum().backward()
    out = {'y_seq': y_seq.detach(), 'x_grad': x_seq.grad.detach()}
    for name, p in net.named_parameters():
        out[name + '.grad'] = p.grad.detach().clone()
        p.grad = None
    functional.reset_net(net)
    return out


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('v_reset', [0., None])
def test_if_node_multi_step_matches_single_step(device, v_reset):
    torch.manual_seed(0)
    T, N = 8, 64
    x_seq = torch.rand([T, N], device=device) * 2.
    sn_s = neuron.IFNode(v_reset=v_reset, step_mode='s').to(device)
    sn_m = neuron.IFNode(v_reset=v_reset, step_mode='m').to(device)
    y_s = torch.stack([sn_s(x_seq[t]) for t in range(T)])
    y_m = sn_m(x_seq)
    assert torch.equal(y_s, y_m)


@pytest.mark.parametrize('device', DEVICES)
def test_lif_node_decay(device):
    sn = neuron.LIFNode(tau=2., v_threshold=100., step_mode='m').to(device)
    x_seq = torch.ones([4, 3], device=device)
    sn(x_seq)
    # V[t] = V[t-1] + (X[t] - V[t-1]) / tau, V[0] = 0  ->  1 - 0.5 ** 4
    assert torch.allclose(sn.v, torch.full_like(sn.v, 1. - 0.5 ** 4))


@requires_cupy
@pytest.mark.parametrize('neuron_cls', [neuron.IFNode, neuron.LIFNode])
@pytest.mark.parametrize('detach_reset', [True, False])
def test_cupy_matches_torch(neuron_cls, detach_reset):
    torch.manual_seed(0)
    device = 'cuda:0'
    x_seq = (torch.rand([16, 4096], device=device) - 0.5) * 4.
    net_torch = neuron_cls(surrogate_function=surrogate.ATan(), detach_reset=detach_reset, step_mode='m',
                           backend='torch').to(device)
    net_cupy = neuron_cls(surrogate_function=surrogate.ATan(), detach_reset=detach_reset, step_mode='m',
                          backend='cupy').to(device)
    out_torch = _fbptt(net_torch, x_seq)
    out_cupy = _fbptt(net_cupy, x_seq)
    for key in out_torch:
        assert torch.allclose(out_torch[key], out_cupy[key], atol=1e-4), key


@pytest.mark.skipif(not torch.cuda.is_available(), reason='fp16 is only tested on GPUs')
def test_half_precision_forward():
    net = torch.nn.Sequential(
        layer.Linear(32, 16),
        neuron.LIFNode(tau=2., surrogate_function=surrogate.Sigmoid(), step_mode='m'),
    )
    functional.set_step_mode(net, 'm')
    net = net.cuda().half()
    x_seq = torch.rand([4, 2, 32], device='cuda', dtype=torch.half)
    with torch.no_grad():
        y_seq = net(x_seq)
    assert y_seq.dtype == torch.half
    assert ((y_seq == 0) | (y_seq == 1)).all()


def test_set_backend_rejects_unknown():
    sn = neuron.IFNode(step_mode='m')
    with pytest.raises(Exception):
        sn.backend = 'triton'
