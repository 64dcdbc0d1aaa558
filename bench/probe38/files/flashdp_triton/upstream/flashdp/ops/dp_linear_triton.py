"""
Fused DP-SGD backward for nn.Linear (FlashDP-style).

Instead of materialising per-sample gradients G_b = dY_b^T X_b (B x O x I) in HBM,
two Triton kernels stream tiles of G_b through SRAM:

  1. _psg_sqnorm_kernel   : per-sample squared Frobenius norms, tile by tile,
                            accumulated with atomics into norms[B]
  2. _clip_accum_kernel   : sum_b min(1, C / ||G_b||) * G_b  written once to dW

Only the (B,) norm vector and the final (O, I) gradient ever touch global memory.
"""

import math

import torch
import triton
import triton.language as tl


def _tile_configs():
    cfgs = []
    for bo, bi in ((64, 64), (128, 64), (64, 128), (128, 128)):
        for bt in (32, 64):
            for warps, stages in ((4, 3), (8, 3), (8, 4)):
                cfgs.append(
                    triton.Config({"BLOCK_O": bo, "BLOCK_I": bi, "BLOCK_T": bt}, num_warps=warps, num_stages=stages)
                )
    return cfgs


@triton.autotune(configs=_tile_configs(), key=["T", "O", "I"])
@triton.jit
def _psg_sqnorm_kernel(
    X, DY, NORMS,
    T, O, I,
    stride_xb, stride_xt, stride_xi,
    stride_yb, stride_yt, stride_yo,
    ALLOW_TF32: tl.constexpr,
    BLOCK_O: tl.constexpr, BLOCK_I: tl.constexpr, BLOCK_T: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_o = tl.program_id(1)
    pid_i = tl.program_id(2)

    offs_o = pid_o * BLOCK_O + tl.arange(0, BLOCK_O)
    offs_i = pid_i * BLOCK_I + tl.arange(0, BLOCK_I)
    offs_t = tl.arange(0, BLOCK_T)

    acc = tl.zeros((BLOCK_O, BLOCK_I), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t = t0 + offs_t
        dy_ptrs = DY + pid_b * stride_yb + t[:, None] * stride_yt + offs_o[None, :] * stride_yo
        x_ptrs = X + pid_b * stride_xb + t[:, None] * stride_xt + offs_i[None, :] * stride_xi
        dy = tl.load(dy_ptrs, mask=(t[:, None] < T) & (offs_o[None, :] < O), other=0.0)
        x = tl.load(x_ptrs, mask=(t[:, None] < T) & (offs_i[None, :] < I), other=0.0, cache_modifier=".cg")
        acc += tl.dot(tl.trans(dy), x, allow_tf32=ALLOW_TF32)

    tile_sq = tl.sum(tl.sum(acc * acc, axis=1), axis=0)
    tl.atomic_add(NORMS + pid_b, tile_sq)


@triton.jit
def _clip_accum_kernel(
    X, DY, SCALE, DW,
    B, T, O, I,
    stride_xb, stride_xt, stride_xi,
    stride_yb, stride_yt, stride_yo,
    stride_wo, stride_wi,
    ALLOW_TF32: tl.constexpr,
    BLOCK_O: tl.constexpr, BLOCK_I: tl.constexpr, BLOCK_T: tl.constexpr,
):
    pid_o = tl.program_id(0)
    pid_i = tl.program_id(1)
    offs_o = pid_o * BLOCK_O + tl.arange(0, BLOCK_O)
    offs_i = pid_i * BLOCK_I + tl.arange(0, BLOCK_I)
    offs_t = tl.arange(0, BLOCK_T)

    acc = tl.zeros((BLOCK_O, BLOCK_I), dtype=tl.float32)
    for b in range(0, B):
        s = tl.load(SCALE + b)
        g = tl.zeros((BLOCK_O, BLOCK_I), dtype=tl.float32)
        for t0 in range(0, T, BLOCK_T):
            t = t0 + offs_t
            dy = tl.load(DY + b * stride_yb + t[:, None] * stride_yt + offs_o[None, :] * stride_yo,
                         mask=(t[:, None] < T) & (offs_o[None, :] < O), other=0.0)
            x = tl.load(X + b * stride_xb + t[:, None] * stride_xt + offs_i[None, :] * stride_xi,
                        mask=(t[:, None] < T) & (offs_i[None, :] < I), other=0.0)
            g += tl.dot(tl.trans(dy), x, allow_tf32=ALLOW_TF32)
        acc += s * g

    w_ptrs = DW + offs_o[:, None] * stride_wo + offs_i[None, :] * stride_wi
    tl.store(w_ptrs, acc.to(DW.dtype.element_ty), mask=(offs_o[:, None] < O) & (offs_i[None, :] < I))


def _allow_tf32() -> bool:
    major, _ = torch.cuda.get_device_capability()
    return major >= 8 and torch.backends.cuda.matmul.allow_tf32


def _clip_grid_tiles(O: int, I: int, device: torch.device) -> int:
    """Pick the output tile so that the clip kernel roughly fills the machine."""
    sm_count = torch.cuda.get_device_properties(device).multi_processor_count
    for tile in (128, 64, 32):
        if triton.cdiv(O, tile) * triton.cdiv(I, tile) >= sm_count:
            return tile
    return 32


def dp_linear_weight_grad(x: torch.Tensor, dy: torch.Tensor, max_grad_norm: float):
    """
    x : (B, T, I) layer input, dy : (B, T, O) output grad.
    Returns (clipped summed weight grad (O, I), per-sample norms (B,)).
    """
    assert x.is_contiguous() and dy.is_contiguous()
    B, T, I = x.shape
    O = dy.shape[-1]
    norms_sq = torch.zeros(B, device=x.device, dtype=torch.float32)
    allow_tf32 = _allow_tf32()

    with torch.cuda.device(x.device):
        grid = lambda meta: (B, triton.cdiv(O, meta["BLOCK_O"]), triton.cdiv(I, meta["BLOCK_I"]))
        _psg_sqnorm_kernel[grid](
            x, dy, norms_sq, T, O, I,
            x.stride(0), x.stride(1), x.stride(2),
            dy.stride(0), dy.stride(1), dy.stride(2),
            ALLOW_TF32=allow_tf32,
        )

        norms = norms_sq.sqrt()
        scale = torch.clamp(max_grad_norm / (norms + 1e-6), max=1.0).contiguous()
        dw = torch.empty((O, I), device=x.device, dtype=x.dtype)
        tile = _clip_grid_tiles(O, I, x.device)
        grid2 = (triton.cdiv(O, tile), triton.cdiv(I, tile))
        _clip_accum_kernel[grid2](
            x, dy, scale, dw, B, T, O, I,
            x.stride(0), x.stride(1), x.stride(2),
            dy.stride(0), dy.stride(1), dy.stride(2),
            dw.stride(0), dw.stride(1),
            ALLOW_TF32=allow_tf32,
            BLOCK_O=tile, BLOCK_I=tile, BLOCK_T=32,
            num_warps=8 if tile >= 128 else 4,
        )
    return dw, norms


def reference_weight_grad(x, dy, max_grad_norm):
    gs = torch.einsum("bto,bti->boi", dy.float(), x.float())
    norms = gs.flatten(1).norm(dim=1)
    scale = torch.clamp(max_grad_norm / (norms + 1e-6), max=1.0)
    return torch.einsum("b,boi->oi", scale, gs).to(x.dtype), norms


if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, I, O = 16, 256, 1024, 4096
    x = torch.randn(B, T, I, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(B, T, O, device="cuda", dtype=torch.bfloat16)
    dw, n = dp_linear_weight_grad(x, dy, 1.0)
    dw_ref, n_ref = reference_weight_grad(x, dy, 1.0)
    print("max |dW - ref| =", (dw.float() - dw_ref.float()).abs().max().item())
    print("max |norm - ref| / ref =", ((n - n_ref).abs() / n_ref).max().item())
    ms = triton.testing.do_bench(lambda: dp_linear_weight_grad(x, dy, 1.0))
    ms_ref = triton.testing.do_bench(lambda: reference_weight_grad(x, dy, 1.0))
    print(f"fused {ms:.3f} ms vs reference {ms_ref:.3f} ms")
