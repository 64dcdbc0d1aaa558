"""Fused uint8 NHWC -> normalised NCHW (fp16/bf16) conversion for the GPU input pipeline.

The loaders hand over pinned uint8 NHWC batches (what the JPEG decoders produce); doing
`x.permute(0, 3, 1, 2).float().sub(mean).div(std).half()` in eager mode costs four full passes
over the batch plus two temporaries. This kernel reads each byte once and writes the result once.

    from kernels.fused_normalize import normalize_nhwc_u8
    x = normalize_nhwc_u8(batch_u8.cuda(non_blocking=True), mean, std)   # (B, 3, H, W) half
"""
from typing import Sequence

import torch
import triton
import triton.language as tl


def _autotune_configs():
    return [
        triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK": 8192}, num_warps=16, num_stages=3),
    ]


@triton.autotune(configs=_autotune_configs(), key=["HW", "C"])
@triton.jit
def _normalize_nhwc_u8_kernel(
    src_ptr,            # uint8  (B, H, W, C) contiguous
    dst_ptr,            # fp16/bf16 (B, C, H, W) contiguous
    mean_ptr,           # fp32 (C,)
    inv_std_ptr,        # fp32 (C,)
    HW,                 # H * W
    C: tl.constexpr,
    OUT_BF16: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_hw = tl.program_id(1)
    offs = pid_hw * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    src_base = src_ptr + pid_b * HW * C
    dst_base = dst_ptr + pid_b * HW * C
    for c in tl.static_range(C):
        v = tl.load(src_base + offs * C + c, mask=mask, other=0, eviction_policy="evict_first")
        m = tl.load(mean_ptr + c)
        s = tl.load(inv_std_ptr + c)
        y = (v.to(tl.float32) - m) * s
        if OUT_BF16:
            y = y.to(tl.bfloat16)
        else:
            y = y.to(tl.float16)
        tl.store(dst_base + c * HW + offs, y, mask=mask)


@triton.jit
def _flip_w_kernel(x_ptr, flags_ptr, H, W, C: tl.constexpr, BLOCK_W: tl.constexpr):
    # in-place horizontal flip of the images whose flag is set (NCHW, one program per (b, c, h) row)
    row = tl.program_id(0)
    b = row // (C * H)
    flag = tl.load(flags_ptr + b)
    if flag != 0:
        offs = tl.arange(0, BLOCK_W)
        mask = offs < W // 2
        base = x_ptr + row * W
        left = tl.load(base + offs, mask=mask)
        right = tl.load(base + (W - 1 - offs), mask=mask)
        tl.store(base + offs, right, mask=mask)
        tl.store(base + (W - 1 - offs), left, mask=mask)


_SM_COUNT = {}


def _num_sms(device: torch.device) -> int:
    if device.index not in _SM_COUNT:
        _SM_COUNT[device.index] = torch.cuda.get_device_properties(device).multi_processor_count
    return _SM_COUNT[device.index]


def _default_out_dtype(device: torch.device) -> torch.dtype:
    # Ampere and newer: bf16 avoids the fp16 overflow checks in the loss scaler
    major, _ = torch.cuda.get_device_capability(device)
    return torch.bfloat16 if major >= 8 else torch.float16


def normalize_nhwc_u8(
    x: torch.Tensor,
    mean: Sequence[float],
    std: Sequence[float],
    out_dtype: torch.dtype = None,
) -> torch.Tensor:
    assert x.is_cuda and x.dtype == torch.uint8 and x.dim() == 4, "expects a uint8 NHWC CUDA tensor"
    x = x.contiguous()
    B, H, W, C = x.shape
    out_dtype = out_dtype or _default_out_dtype(x.device)
    out = torch.empty((B, C, H, W), device=x.device, dtype=out_dtype)
    mean_t = torch.tensor([m * 255.0 for m in mean], device=x.device, dtype=torch.float32)
    inv_std_t = torch.tensor([1.0 / (s * 255.0) for s in std], device=x.device, dtype=torch.float32)
    HW = H * W
    grid = lambda meta: (B, triton.cdiv(HW, meta["BLOCK"]))
    _normalize_nhwc_u8_kernel[grid](
        x, out, mean_t, inv_std_t, HW, C=C, OUT_BF16=(out_dtype == torch.bfloat16)
    )
    return out


def random_hflip_(x: torch.Tensor, p: float = 0.5) -> torch.Tensor:
    """In-place random horizontal flip of an NCHW batch (one coin per image)."""
    B, C, H, W = x.shape
    flags = (torch.rand(B, device=x.device) < p).to(torch.int32)
    block_w = triton.next_power_of_2(max(W // 2, 1))
    # small images: fewer warps, more programs in flight per SM
    warps = 4 if block_w <= 512 else 8
    if B * C * H < 4 * _num_sms(x.device):
        warps = 2
    _flip_w_kernel[(B * C * H,)](x, flags, H, W, C=C, BLOCK_W=block_w, num_warps=warps)
    return x


def normalize_reference(x: torch.Tensor, mean, std, out_dtype=torch.float16) -> torch.Tensor:
    """Eager reference used by the tests (any device)."""
    m = torch.tensor(mean, device=x.device).view(1, -1, 1, 1) * 255.0
    s = torch.tensor(std, device=x.device).view(1, -1, 1, 1) * 255.0
    return ((x.permute(0, 3, 1, 2).float() - m) / s).to(out_dtype)


if __name__ == "__main__":
    torch.manual_seed(0)
    xb = torch.randint(0, 256, (64, 224, 224, 3), dtype=torch.uint8, device="cuda")
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    got = normalize_nhwc_u8(xb, mean, std, out_dtype=torch.float16)
    ref = normalize_reference(xb, mean, std)
    torch.testing.assert_close(got, ref, atol=2e-3, rtol=0)
    ms = triton.testing.do_bench(lambda: normalize_nhwc_u8(xb, mean, std))
    ms_ref = triton.testing.do_bench(lambda: normalize_reference(xb, mean, std))
    print(f"fused {ms:.3f} ms vs eager {ms_ref:.3f} ms")
