import pytest
import torch

from lightning_attn.ops import lightning_attn_func
from lightning_attn.utils import _build_slope_tensor


HAS_CUDA = torch.cuda.is_available()
IS_AMPERE = HAS_CUDA and torch.cuda.get_device_capability()[0] >= 8


def get_params():
    shapes = [
        # only d=128 in the paper models, but the kernel supports more
        (6, 8, 512, 128, 64),
        (6, 8, 512, 128, 128),
        (4, 8, 1024, 64, 64),
        (2, 16, 2048, 128, 128),
        (1, 32, 4096, 64, 128),
        (6, 8, 255, 96, 96),
        (3, 7, 129, 32, 64),
    ]
    return shapes


def linear_attn(q, k, v, s):
    """Quadratic reference: O = ((Q K^T) * decay_mask) V."""
    b, h, n, d = q.shape
    mask = get_mask(n, s).to(q.device)
    qk = torch.matmul(q, k.transpose(2, 3))
    qk = (qk.to(torch.float32) * mask).to(q.dtype)
    o = torch.matmul(qk, v)
    return o


def get_mask(n, slope=1):
    mask = torch.triu(torch.zeros(n, n).float().fill_(float("-inf")), 1)
    # -n, ..., -2, -1, 0
    for i in range(n):
        x = torch.arange(i + 1)
        y = slope * x
        mask[i, : i + 1] = -torch.flip(y, [-1])

    return torch.exp(mask)


@pytest.mark.skipif(not HAS_CUDA, reason="Triton kernels need a GPU")
@pytest.mark.parametrize("b, h, n, d, e", get_params())
@pytest.mark.parametrize(
    "dtype",
    [torch.float16, pytest.param(torch.bfloat16, marks=pytest.mark.skipif(not IS_AMPERE, reason="bf16 needs sm80"))],
)
def test_lightning2(b, h, n, d, e, dtype):
    torch.manual_seed(2024)
    device = torch.device("cuda")
    q = (torch.randn((b, h, n, d), dtype=dtype, device=device) / 10).requires_grad_()
    k = (torch.randn((b, h, n, d), dtype=dtype, device=device) / 10).requires_grad_()
    v = (torch.randn((b, h, n, e), dtype=dtype, device=device) / 10).requires_grad_()
    do = torch.randn((b, h, n, e), dtype=dtype, device=device) / 10
    s = _build_slope_tensor(h).to(q.device).to(torch.float32)

    # reference
    o_ref = linear_attn(q, k, v, s)

    # backward
    o_ref.backward(do, retain_graph=True)
    dq_ref, q.grad = q.grad.clone(), None
    dk_ref, k.grad = k.grad.clone(), None
    dv_ref, v.grad = v.grad.clone(), None

    # triton implementation
    o = lightning_attn_func(q, k, v, s)
    o.backward(do, retain_graph=True)
    dq, q.grad = q.grad.clone(), None
    dk, k.grad = k.grad.clone(), None
    dv, v.grad = v.grad.clone(), None

    print(torch.norm(o - o_ref).item())
    print(torch.norm(dq - dq_ref).item())
    print(torch.norm(dk - dk_ref).item())
    print(torch.norm(dv - dv_ref).item())

    atol = 1e-2 if dtype == torch.float16 else 5e-2
    assert torch.allclose(o, o_ref, atol=atol, rtol=0)
    assert torch.allclose(dq, dq_ref, atol=atol, rtol=0)
    assert torch.allclose(dk, dk_ref, atol=atol, rtol=0)
    assert torch.allclose(dv, dv_ref, atol=atol, rtol=0)


@pytest.mark.skipif(not HAS_CUDA, reason="Triton kernels need a GPU")
def test_slope_tensor_on_device():
    s = _build_slope_tensor(8)
    assert s.shape == (8, 1, 1)
    s_dev = s.cuda()
    assert s_dev.is_cuda
    assert torch.all(s_dev > 0)
