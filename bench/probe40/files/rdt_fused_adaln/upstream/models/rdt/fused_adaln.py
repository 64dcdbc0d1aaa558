# Fused RMSNorm + adaLN modulation for the RDT (Robotics Diffusion Transformer) action blocks.
#
#   y = rmsnorm(x) * w * (1 + scale[b]) + shift[b]
#
# Every DiT block normalises the noisy action / proprio tokens and modulates them with the diffusion-timestep
# and control-frequency conditioning. Doing this in one Triton kernel saves two full read/write passes over
# the (B, T, D) activations; the backward pass recomputes in PyTorch.

import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import triton
    import triton.language as tl

    _TRITON_AVAILABLE = True
except ImportError:  # CPU-only installs
    triton = None
    tl = None
    _TRITON_AVAILABLE = False

try:
    from flash_attn import flash_attn_func
    HAS_FLASH_ATTN = True
except ImportError:
    flash_attn_func = None
    HAS_FLASH_ATTN = False


def rms_norm_modulate_ref(x, weight, shift, scale, eps: float = 1e-6):
    """Reference implementation (also used on CPU and for the backward pass)."""
    dtype = x.dtype
    variance = x.float().pow(2).mean(-1, keepdim=True)
    x = x.float() * torch.rsqrt(variance + eps)
    x = x * weight.float()
    x = x * (1 + scale.float().unsqueeze(1)) + shift.float().unsqueeze(1)
    return x.to(dtype)


if _TRITON_AVAILABLE:

    @triton.jit
    def _rmsnorm_modulate_fwd(
        X, Y, W, SHIFT, SCALE, RSTD,
        stride_x_row, stride_y_row, stride_mod,
        M, N, seq_len, eps,
        BLOCK_N: tl.constexpr,
    ):
        pid = tl.program_id(0)
        num_progs = tl.num_programs(0)
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        w = tl.load(W + cols, mask=mask, other=1.0).to(tl.float32)
        # persistent loop over rows
        for row in range(pid, M, num_progs):
            batch = row // seq_len
            x = tl.load(X + row * stride_x_row + cols, mask=mask, other=0.0).to(tl.float32)
            var = tl.sum(x * x, axis=0) / N
            rstd = 1.0 / tl.sqrt(var + eps)
            tl.store(RSTD + row, rstd)
            shift = tl.load(SHIFT + batch * stride_mod + cols, mask=mask, other=0.0).to(tl.float32)
            scale = tl.load(SCALE + batch * stride_mod + cols, mask=mask, other=0.0).to(tl.float32)
            y = x * rstd * w
            y = y * (1.0 + scale) + shift
            tl.store(Y + row * stride_y_row + cols, y.to(Y.dtype.element_ty), mask=mask)


def _num_sms(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _launch_config(N: int, device: torch.device) -> Tuple[int, int]:
    BLOCK_N = triton.next_power_of_2(N)
    if BLOCK_N > 65536:
        raise RuntimeError("rms_norm_modulate: hidden size too large for the fused kernel")
    # Hopper has a larger register file: keep more warps per row there
    if torch.cuda.get_device_capability(device)[0] >= 9:
        num_warps = min(max(BLOCK_N // 128, 1), 16)
    else:
        num_warps = min(max(BLOCK_N // 256, 1), 8)
    return BLOCK_N, num_warps


class FusedRMSNormModulate(torch.autograd.Function):

    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, x, weight, shift, scale, eps):
        B, T, D = x.shape
        x2d = x.reshape(-1, D).contiguous()
        shift = shift.contiguous()
        scale = scale.contiguous()
        y = torch.empty_like(x2d)
        M = x2d.shape[0]
        rstd = torch.empty((M,), dtype=torch.float32, device=x.device)

        BLOCK_N, num_warps = _launch_config(D, x.device)
        grid = (min(M, 4 * _num_sms(x.device)),)
        with torch.cuda.device(x.device.index):
            _rmsnorm_modulate_fwd[grid](
                x2d, y, weight, shift, scale, rstd,
                x2d.stride(0), y.stride(0), shift.stride(0),
                M, D, T, eps,
                BLOCK_N=BLOCK_N, num_warps=num_warps,
            )
        ctx.save_for_backward(x, weight, shift, scale)
        ctx.eps = eps
        return y.reshape(B, T, D)

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_out):
        x, weight, shift, scale = ctx.saved_tensors
        with torch.enable_grad():
            x_ = x.detach().requires_grad_(ctx.needs_input_grad[0])
            w_ = weight.detach().requires_grad_(ctx.needs_input_grad[1])
            sh_ = shift.detach().requires_grad_(ctx.needs_input_grad[2])
            sc_ = scale.detach().requires_grad_(ctx.needs_input_grad[3])
            out = rms_norm_modulate_ref(x_, w_, sh_, sc_, ctx.eps)
            inputs = [t for t in (x_, w_, sh_, sc_) if t.requires_grad]
            grads = torch.autograd.grad(out, inputs, grad_out)
        grads = iter(grads)
        return tuple(next(grads) if need else None for need in ctx.needs_input_grad[:4]) + (None,)


def rms_norm_modulate(x, weight, shift, scale, eps: float = 1e-6):
    if x.device.type == "cpu" or not _TRITON_AVAILABLE:
        return rms_norm_modulate_ref(x, weight, shift, scale, eps)
    return FusedRMSNormModulate.apply(x, weight, shift, scale, eps)


class ModulatedRMSNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x, shift, scale):
        return rms_norm_modulate(x, self.weight, shift, scale, self.eps)


class Attention(nn.Module):
    """Multi-head self-attention used inside the RDT blocks (qk-norm, optional flash-attn)."""

    def __init__(self, dim: int, num_heads: int = 8, qk_norm: bool = True, attn_drop: float = 0.0):
        super().__init__()
        assert dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.q_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
        self.k_norm = nn.LayerNorm(self.head_dim) if qk_norm else nn.Identity()
        self.attn_drop = attn_drop
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.unbind(2)
        q, k = self.q_norm(q), self.k_norm(k)
        if HAS_FLASH_ATTN and mask is None and x.is_cuda and x.dtype in (torch.float16, torch.bfloat16):
            out = flash_attn_func(q, k, v, dropout_p=self.attn_drop if self.training else 0.0, softmax_scale=self.scale)
        else:
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=self.attn_drop if self.training else 0.0, scale=self.scale
            )
            out = out.transpose(1, 2)
        return self.proj(out.reshape(B, N, C))


class RDTBlock(nn.Module):
    """Pre-norm DiT block with adaLN modulation from the (timestep, ctrl-freq) conditioning token."""

    def __init__(self, hidden_size: int, num_heads: int, mlp_ratio: float = 4.0):
        super().__init__()
        self.norm1 = ModulatedRMSNorm(hidden_size)
        self.attn = Attention(hidden_size, num_heads=num_heads)
        self.norm2 = ModulatedRMSNorm(hidden_size)
        mlp_hidden = int(hidden_size * mlp_ratio)
        self.mlp = nn.Sequential(
            nn.Linear(hidden_size, mlp_hidden),
            nn.GELU(approximate="tanh"),
            nn.Linear(mlp_hidden, hidden_size),
        )
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden_size, 6 * hidden_size, bias=True))

    def forward(self, x: torch.Tensor, c: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.adaLN_modulation(c).chunk(6, dim=-1)
        x = x + gate_msa.unsqueeze(1) * self.attn(self.norm1(x, shift_msa, scale_msa), mask=mask)
        x = x + gate_mlp.unsqueeze(1) * self.mlp(self.norm2(x, shift_mlp, scale_mlp))
        return x
