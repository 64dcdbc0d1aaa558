"""
Fused GroupNorm (+ optional SiLU) Triton kernels for real-time LCM / SD-Turbo inference.

diffusers' ResnetBlock2D runs `norm1 -> silu -> conv1` and `norm2 -> silu -> dropout -> conv2`;
at batch 1 and 4 steps the two-pass GroupNorm plus the separate SiLU kernel is ~9% of UNet time on
an RTX 4090. `patch_unet_group_norm(unet)` swaps every GroupNorm that is followed by SiLU for
`TritonGroupNormSiLU`, which does statistics and normalisation+activation in one launch per group.

Inference only (no backward); falls back to PyTorch ops for training / non-contiguous inputs.
"""
import functools
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

# number of streaming multiprocessors, used to size the persistent statistics kernel
NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count
# bf16 loads/stores need sm_80+
_SUPPORTS_BF16 = torch.cuda.get_device_capability()[0] >= 8


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=16, num_stages=1),
    ],
    key=["group_size"],
)
@triton.jit
def _group_norm_silu_fwd_kernel(
    X,
    Y,
    W,
    B,
    Mean,
    Rstd,
    C,
    HxW,
    num_groups,
    C_G,
    group_size,
    eps,
    APPLY_SILU: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    batch = pid // num_groups
    group = pid % num_groups
    offset = batch * C * HxW + group * group_size
    X += offset
    Y += offset

    # pass 1: statistics in fp32
    _sum = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    _sqsum = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, group_size, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < group_size, other=0.0).to(tl.float32)
        _sum += x
        _sqsum += x * x
    mean = tl.sum(_sum, axis=0) / group_size
    var = tl.sum(_sqsum, axis=0) / group_size - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(Mean + pid, mean)
    tl.store(Rstd + pid, rstd)

    # pass 2: normalise, affine, activation
    for off in range(0, group_size, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < group_size
        ch = group * C_G + cols // HxW
        w = tl.load(W + ch, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(B + ch, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        if APPLY_SILU:
            y = y * tl.sigmoid(y)
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _group_stats_persistent_kernel(X, Mean, Rstd, n_rows, row_size, eps, NUM_PROGRAMS: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    # one program per SM, grid-strided over (batch, group) rows
    start = tl.program_id(0)
    for row in range(start, n_rows, NUM_PROGRAMS):
        base = X + row * row_size
        _sum = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        _sqsum = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
        for off in range(0, row_size, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            x = tl.load(base + cols, mask=cols < row_size, other=0.0).to(tl.float32)
            _sum += x
            _sqsum += x * x
        mean = tl.sum(_sum, axis=0) / row_size
        var = tl.sum(_sqsum, axis=0) / row_size - mean * mean
        tl.store(Mean + row, mean)
        tl.store(Rstd + row, 1.0 / tl.sqrt(var + eps))


def group_norm_silu(x, num_groups, weight, bias, eps=1e-5, apply_silu=True):
    assert x.is_cuda, "triton group norm expects a CUDA tensor"
    assert x.dim() == 4 and x.is_contiguous()
    if x.dtype == torch.bfloat16 and not _SUPPORTS_BF16:
        raise RuntimeError("bf16 group norm needs compute capability >= 8.0")
    N, C, H, W = x.shape
    C_G = C // num_groups
    HxW = H * W
    y = torch.empty_like(x)
    mean = torch.empty((N * num_groups,), device=x.device, dtype=torch.float32)
    rstd = torch.empty_like(mean)
    grid = (N * num_groups,)
    _group_norm_silu_fwd_kernel[grid](
        x, y, weight, bias, mean, rstd,
        C, HxW, num_groups, C_G, C_G * HxW, eps,
        APPLY_SILU=apply_silu,
    )
    return y


def group_stats(x, num_groups, eps=1e-5):
    """mean / rstd per (batch, group) with a persistent kernel (used for the VAE decoder)."""
    N, C, H, W = x.shape
    n_rows = N * num_groups
    row_size = (C // num_groups) * H * W
    mean = torch.empty((n_rows,), device=x.device, dtype=torch.float32)
    rstd = torch.empty_like(mean)
    num_programs = min(NUM_SMS, n_rows)
    _group_stats_persistent_kernel[(num_programs,)](
        x, mean, rstd, n_rows, row_size, eps, NUM_PROGRAMS=num_programs, BLOCK_SIZE=2048, num_warps=8
    )
    return mean.view(N, num_groups), rstd.view(N, num_groups)


class TritonGroupNormSiLU(nn.GroupNorm):
    """GroupNorm followed by SiLU; uses the fused Triton kernel when it can."""

    def forward(self, x):
        if x.is_cuda and x.dim() == 4 and x.is_contiguous() and not torch.is_grad_enabled():
            return group_norm_silu(x, self.num_groups, self.weight, self.bias, self.eps, apply_silu=True)
        return F.silu(F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps))


def _swap(parent, name, gn):
    new = TritonGroupNormSiLU(gn.num_groups, gn.num_channels, eps=gn.eps, affine=gn.affine)
    new.load_state_dict(gn.state_dict())
    new.to(device=gn.weight.device, dtype=gn.weight.dtype)
    setattr(parent, name, new)


def patch_unet_group_norm(unet):
    """Fuse norm+SiLU in every diffusers ResnetBlock2D of `unet` (in place)."""
    from diffusers.models.resnet import ResnetBlock2D

    n = 0
    for module in unet.modules():
        if isinstance(module, ResnetBlock2D) and isinstance(module.nonlinearity, nn.SiLU):
            _swap(module, "norm1", module.norm1)
            _swap(module, "norm2", module.norm2)
            # the activation now lives inside the norm
            module.forward = functools.partial(_resnet_forward_fused, module)
            n += 1
    logger.info("fused GroupNorm+SiLU in %d resnet blocks", n)
    return unet


def _resnet_forward_fused(block, input_tensor, temb, *args, **kwargs):
    hidden_states = block.norm1(input_tensor)
    if block.upsample is not None:
        input_tensor = block.upsample(input_tensor)
        hidden_states = block.upsample(hidden_states)
    elif block.downsample is not None:
        input_tensor = block.downsample(input_tensor)
        hidden_states = block.downsample(hidden_states)
    hidden_states = block.conv1(hidden_states)
    if block.time_emb_proj is not None:
        temb = block.time_emb_proj(block.nonlinearity(temb))[:, :, None, None]
        hidden_states = hidden_states + temb
    hidden_states = block.norm2(hidden_states)
    hidden_states = block.dropout(hidden_states)
    hidden_states = block.conv2(hidden_states)
    if block.conv_shortcut is not None:
        input_tensor = block.conv_shortcut(input_tensor)
    return (input_tensor + hidden_states) / block.output_scale_factor
