import pytest
import torch

import punica.ops

CUDA_AVAILABLE = torch.cuda.is_available()
requires_cuda = pytest.mark.skipif(not CUDA_AVAILABLE, reason="punica kernels require a CUDA GPU")
requires_sm80 = pytest.mark.skipif(
    not CUDA_AVAILABLE or torch.cuda.get_device_capability()[0] < 8,
    reason="cutlass SGMV kernels are built for sm_80+",
)


def assert_close(a, b):
    rtol, atol = {
        torch.float16: (5e-3, 5e-3),
        torch.bfloat16: (3e-2, 2e-2),
    }[a.dtype]
    torch.testing.assert_close(a, b, rtol=rtol, atol=atol)


def sgmv_ref_impl(
    y: torch.Tensor,
    x: torch.Tensor,
    w: list[torch.Tensor],
    s: torch.IntTensor,
    layer_idx: int,
):
    for i in range(len(w)):
        xi = x[s[i] : s[i + 1]]
        wi = w[i][layer_idx, :, :]
        yi = y[s[i] : s[i + 1]]
        yi.add_(xi @ wi)


def lora_ref_impl(
    y: torch.Tensor,
    x: torch.Tensor,
    wa: list[torch.Tensor],
    wb: list[torch.Tensor],
    s: torch.IntTensor,
    layer_idx: int,
):
    for i in range(len(wa)):
        xi = x[s[i] : s[i + 1]]
        wai = wa[i][layer_idx, :, :]
        wbi = wb[i][layer_idx, :, :]
        yi = y[s[i] : s[i + 1]]
        yi.add_(xi @ wai.T @ wbi)


def get_lora_lens(bs: int, popularity: str) -> list[int]:
    if popularity == "bgmv":
        return [1] * bs
    if popularity.startswith("bmm"):
        n = int(popularity.removeprefix("bmm"))
        return [bs // n] * n
    if popularity == "identical":
        return [bs]
    raise KeyError(popularity)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0xABCDABCD987)
    torch.cuda.manual_seed_all(0xABCDABCD987)


@requires_sm80
@pytest.mark.parametrize("dtype_str", ["float16", "bfloat16"])
@pytest.mark.parametrize("h", [4096, 5120, 11008])
@pytest.mark.parametrize("r", [8, 16, 32, 64])
@pytest.mark.parametrize("direction", ["shrink", "expand"])
@pytest.mark.parametrize("popularity", ["bgmv", "bmm2", "bmm4", "identical"])
@pytest.mark.parametrize("batch_size", [1, 7, 32])
@torch.inference_mode()
def test_sgmv_correctness(dtype_str, h, r, direction, popularity, batch_size):
    torch.manual_seed(0xABCDABCD987)
    num_layers = 5
    dtype = getattr(torch, dtype_str)
    device = torch.device("cuda:0")
    h1, h2 = (h, r) if direction == "shrink" else (r, h)

    seqlens = get_lora_lens(batch_size, popularity)
    w = [
        torch.randn((num_layers, h1, h2), dtype=dtype, device=device)
        for _ in range(len(seqlens))
    ]
    w_ptr = torch.tensor([t.data_ptr() for t in w], dtype=torch.int64, device=device)
    s = torch.cumsum(
        torch.tensor([0] + seqlens, device=device), dim=0, dtype=torch.int32
    )
    x = torch.randn((s[-1], h1), dtype=dtype, device=device)
    y = torch.randn((s[-1], h2), dtype=dtype, device=device)
    for layer_idx in range(num_layers):
        y_ref = y.clone()
        sgmv_ref_impl(y_ref, x, w, s, layer_idx)
        y_our = y.clone()
        punica.ops.sgmv(y_our, x, w_ptr, s, layer_idx)
        assert_close(y_ref, y_our)


@requires_sm80
@pytest.mark.parametrize("dtype_str", ["float16", "bfloat16"])
@pytest.mark.parametrize("h1,h2", [(4096, 4096), (4096, 11008), (11008, 4096)])
@pytest.mark.parametrize("r", [16, 64])
@pytest.mark.parametrize("popularity", ["bgmv", "bmm4", "identical"])
@pytest.mark.parametrize("batch_size", [1, 32])
@torch.inference_mode()
def test_add_lora_sgmv_custom_cutlass(dtype_str, h1, h2, r, popularity, batch_size):
    num_layers = 3
    dtype = getattr(torch, dtype_str)
    device = "cuda"

    seqlens = get_lora_lens(batch_size, popularity)
    wa = [torch.randn((num_layers, r, h1), dtype=dtype, device=device) / 10 for _ in seqlens]
    wb = [torch.randn((num_layers, r, h2), dtype=dtype, device=device) / 10 for _ in seqlens]
    wa_ptr = torch.tensor([t.data_ptr() for t in wa], dtype=torch.int64, device=device)
    wb_ptr = torch.tensor([t.data_ptr() for t in wb], dtype=torch.int64, device=device)
    s = torch.cumsum(torch.tensor([0] + seqlens, device=device), dim=0, dtype=torch.int32)
    x = torch.randn((s[-1], h1), dtype=dtype, device=device)
    y = torch.randn((s[-1], h2), dtype=dtype, device=device)
    for layer_idx in range(num_layers):
        y_ref = y.clone()
        lora_ref_impl(y_ref, x, wa, wb, s, layer_idx)
        y_our = y.clone()
        punica.ops.add_lora_sgmv_custom_cutlass(y_our, x, wa_ptr, wb_ptr, s, layer_idx, r)
        assert_close(y_ref, y_our)


@requires_cuda
@pytest.mark.parametrize("dtype_str", ["float16", "bfloat16"])
@torch.inference_mode()
def test_rms_norm(dtype_str):
    dtype = getattr(torch, dtype_str)
    x = torch.randn((37, 4096), dtype=dtype).cuda()
    w = torch.randn((4096,), dtype=dtype).cuda()
    eps = 1e-6
    xf = x.float()
    ref = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(dtype) * w
    out = punica.ops.rms_norm(x, w, eps)
    assert_close(ref, out)


@requires_cuda
def test_rejects_cpu_tensors():
    y = torch.zeros((4, 16), dtype=torch.float16)
    x = torch.zeros((4, 4096), dtype=torch.float16)
    w = torch.zeros((1, 1, 16, 4096), dtype=torch.float16)
    idx = torch.zeros((4,), dtype=torch.long)
    with pytest.raises(ValueError, match="CUDA tensor"):
        punica.ops.bgmv(y, x, w, idx, 0, 1.0)
