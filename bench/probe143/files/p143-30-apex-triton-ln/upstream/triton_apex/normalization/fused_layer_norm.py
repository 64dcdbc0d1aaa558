"""Drop-in replacement for ``apex.normalization.FusedLayerNorm`` / ``FusedRMSNorm``.

The apex CUDA extension (``fused_layer_norm_cuda``) is used when it is installed; otherwise
(or with ``TRITON_APEX_LN_BACKEND=triton``) the Triton kernels below are used, so that the
package works with a plain ``pip install`` without compiling anything.
"""

import numbers
import os

import torch
import triton
import triton.language as tl
from torch.nn import init
from torch.nn.parameter import Parameter

try:
    import fused_layer_norm_cuda  # apex CUDA extension, built with --cuda_ext

    HAVE_APEX_KERNELS = True
except ImportError:
    fused_layer_norm_cuda = None
    HAVE_APEX_KERNELS = False

_BACKEND = os.environ.get("TRITON_APEX_LN_BACKEND", "apex" if HAVE_APEX_KERNELS else "triton")


def _cast_if_autocast_enabled(*args):
    if not torch.is_autocast_enabled():
        return args
    else:
        return torch.cuda.amp.autocast_mode._cast(args, torch.get_autocast_gpu_dtype())


@triton.jit
def _ln_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps,
                   RMS: tl.constexpr, AFFINE: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    if RMS:
        mean = 0.0
        xc = tl.where(mask, x, 0.0)
    else:
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    y = xc * rstd
    if AFFINE:
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        y = y * w
        if not RMS:
            b = tl.load(B + cols, mask=mask).to(tl.float32)
            y = y + b
    tl.store(Y + row * stride + cols, y, mask=mask)


@triton.jit
def _ln_bwd_dx_kernel(DY, DX, X, W, Mean, Rstd, stride, N,
                      RMS: tl.constexpr, AFFINE: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    if AFFINE:
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        wdy = w * dy
    else:
        wdy = dy
    c1 = tl.sum(xhat * wdy, axis=0) / N
    if RMS:
        dx = (wdy - xhat * c1) * rstd
    else:
        c2 = tl.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + row * stride + cols, dx, mask=mask)


def _launch_settings(n_cols: int):
    BLOCK_N = triton.next_power_of_2(n_cols)
    if BLOCK_N > 16384:
        raise RuntimeError(f"normalized dimension {n_cols} is too large for the fused Triton kernel")
    num_warps = min(max(BLOCK_N // 256, 1), 16)
    return BLOCK_N, num_warps


class FusedLayerNormAffineFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, normalized_shape, eps, rms=False):
        ctx.normalized_shape = normalized_shape
        ctx.eps = eps
        ctx.rms = rms
        input_ = input.contiguous()
        weight_ = weight.contiguous()
        bias_ = bias.contiguous() if bias is not None else None
        if _BACKEND == "apex":
            if rms:
                output, invvar = fused_layer_norm_cuda.rms_forward_affine(input_, ctx.normalized_shape, weight_, ctx.eps)
                mean = None
            else:
                output, mean, invvar = fused_layer_norm_cuda.forward_affine(
                    input_, ctx.normalized_shape, weight_, bias_, ctx.eps
                )
        else:
            assert input_.dtype == weight_.dtype, (
                f"input ({input_.dtype}) and weight ({weight_.dtype}) must have the same dtype; "
                "use MixedFusedLayerNorm for fp32 weights with half inputs"
            )
            n = weight_.numel()
            x2d = input_.view(-1, n)
            output = torch.empty_like(x2d)
            mean = torch.empty(x2d.shape[0], dtype=torch.float32, device=input.device)
            invvar = torch.empty_like(mean)
            BLOCK_N, num_warps = _launch_settings(n)
            _ln_fwd_kernel[(x2d.shape[0],)](
                x2d, output, weight_, bias_ if bias_ is not None else weight_, mean, invvar,
                x2d.stride(0), n, eps, RMS=rms, AFFINE=True, BLOCK_N=BLOCK_N, num_warps=num_warps,
            )
            output = output.view_as(input_)
        ctx.save_for_backward(input_, weight_, bias_, mean, invvar)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input_, weight_, bias_, mean, invvar = ctx.saved_tensors
        grad_output = grad_output.contiguous()
        if _BACKEND == "apex":
            grad_input, grad_weight, grad_bias = fused_layer_norm_cuda.backward_affine(
                grad_output, mean, invvar, input_, ctx.normalized_shape, weight_, bias_, ctx.eps
            )
            return grad_input, grad_weight, grad_bias, None, None, None
        n = weight_.numel()
        x2d = input_.view(-1, n)
        dy2d = grad_output.view(-1, n)
        grad_input = torch.empty_like(x2d)
        BLOCK_N, num_warps = _launch_settings(n)
        _ln_bwd_dx_kernel[(x2d.shape[0],)](
            dy2d, grad_input, x2d, weight_, mean, invvar, x2d.stride(0), n,
            RMS=ctx.rms, AFFINE=True, BLOCK_N=BLOCK_N, num_warps=num_warps,
        )
        # weight/bias grads with plain PyTorch reductions (fp32 accumulation)
        xhat = (x2d.float() - mean[:, None]) * invvar[:, None]
        grad_weight = (dy2d.float() * xhat).sum(0).to(weight_.dtype)
        grad_bias = dy2d.float().sum(0).to(bias_.dtype) if bias_ is not None and not ctx.rms else None
        return grad_input.view_as(input_), grad_weight, grad_bias, None, None, None


def fused_layer_norm_affine(input, weight, bias, normalized_shape, eps=1e-6):
    args = _cast_if_autocast_enabled(input, weight, bias, normalized_shape, eps)
    with torch.cuda.amp.autocast(enabled=False):
        return FusedLayerNormAffineFunction.apply(*args)


def fused_rms_norm_affine(input, weight, normalized_shape, eps=1e-6):
    args = _cast_if_autocast_enabled(input, weight, None, normalized_shape, eps)
    with torch.autocast(device_type="cuda", enabled=False):
        return FusedLayerNormAffineFunction.apply(*args, True)


class FusedLayerNorm(torch.nn.Module):
    r"""Applies Layer Normalization over a mini-batch of inputs as described in
    the paper `Layer Normalization`_ .

    Currently only runs on cuda() tensors.

    .. _`Layer Normalization`: https://arxiv.org/abs/1607.06450
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()

        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = torch.Size(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(torch.empty(*normalized_shape))
            self.bias = Parameter(torch.empty(*normalized_shape))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        if torch.jit.is_tracing() or torch.jit.is_scripting() or not input.is_cuda:
            return torch.nn.functional.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)
        if self.elementwise_affine:
            return fused_layer_norm_affine(input, self.weight, self.bias, self.normalized_shape, self.eps)
        return torch.nn.functional.layer_norm(input, self.normalized_shape, None, None, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, " "elementwise_affine={elementwise_affine}".format(**self.__dict__)


class MixedFusedLayerNorm(FusedLayerNorm):
    """fp32 weights with half inputs (Megatron-style); the Triton path upcasts the weights."""

    def forward(self, input):
        if not input.is_cuda:
            return super().forward(input)
        weight = self.weight.to(input.dtype)
        bias = self.bias.to(input.dtype)
        return FusedLayerNormAffineFunction.apply(input, weight, bias, self.normalized_shape, self.eps)
