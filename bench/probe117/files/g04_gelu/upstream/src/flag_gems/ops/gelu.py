import logging

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

from ..utils import pointwise_dynamic

logger = logging.getLogger(__name__)

# sqrt(2/pi) and 1/sqrt(2)
_SQRT_2_OVER_PI = 0.7978845608028654
_INV_SQRT_2 = 0.7071067811865476


@triton.jit
def fast_tanh(x):
    # tanh.approx.f32 has ~2 ulp error and is 3-4x faster than the libdevice tanh on sm_80+
    return tl.inline_asm_elementwise(
        asm="tanh.approx.f32 $0, $1;",
        constraints="=r,r",
        args=[x],
        dtype=tl.float32,
        is_pure=True,
        pack=1,
    )


@pointwise_dynamic(promotion_methods=[(0, "DEFAULT")])
@triton.jit
def gelu_none(x):
    x_fp32 = x.to(tl.float32)
    output = 0.5 * x_fp32 * (1 + libdevice.erf(x_fp32 * _INV_SQRT_2))
    return output


@pointwise_dynamic(promotion_methods=[(0, "DEFAULT")])
@triton.jit
def gelu_tanh(x):
    x_fp32 = x.to(tl.float32)
    output = (
        0.5
        * x_fp32
        * (1 + fast_tanh(x_fp32 * _SQRT_2_OVER_PI * (1 + 0.044715 * x_fp32 * x_fp32)))
    )
    return output


@pointwise_dynamic(promotion_methods=[(0, "DEFAULT")])
@triton.jit
def gelu_backward_none(x, dy):
    scale1: tl.constexpr = _INV_SQRT_2
    scale2: tl.constexpr = 0.3989422803  # 1 / math.sqrt(2 * math.pi)
    x_fp32 = x.to(tl.float32)
    dydx = (
        scale2 * x_fp32 * libdevice.fast_expf(-0.5 * x_fp32 * x_fp32)
        + 0.5 * libdevice.erf(x_fp32 * scale1)
        + 0.5
    )
    dx = dydx * dy
    return dx


@pointwise_dynamic(promotion_methods=[(0, "DEFAULT")])
@triton.jit
def gelu_backward_tanh(x, dy):
    x_fp32 = x.to(tl.float32)
    # 0.79788456 = math.sqrt(2 / math.pi)
    tanh_out = libdevice.tanh(0.79788456 * x_fp32 * (1 + 0.044715 * x_fp32 * x_fp32))
    dydx = 0.5 * x_fp32 * (
        (1 - tanh_out * tanh_out) * (0.79788456 + 0.1070322243 * x_fp32 * x_fp32)
    ) + 0.5 * (1 + tanh_out)
    dx = dydx * dy
    return dx


class Gelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, approximate):
        logger.debug("GEMS GELU FORWARD")
        if approximate == "tanh":
            out = gelu_tanh(A)
        else:
            out = gelu_none(A)
        ctx.save_for_backward(A)
        ctx.approximate = approximate
        return out

    @staticmethod
    def backward(ctx, out_grad):
        logger.debug("GEMS GELU BACKWARD")
        (inp,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            in_grad = gelu_backward_tanh(inp, out_grad)
        else:
            in_grad = gelu_backward_none(inp, out_grad)
        return in_grad, None


def gelu(A, *, approximate="none"):
    return Gelu.apply(A, approximate)


# ---------------------------------------------------------------------------------------
# other transcendental pointwise ops that share the libdevice helpers
# ---------------------------------------------------------------------------------------
@pointwise_dynamic(promotion_methods=[(0, "INT_TO_FLOAT")])
@triton.jit
def erf_func(x):
    output = libdevice.erf(x.to(tl.float32))
    return output


def erf(x):
    logger.debug("GEMS ERF")
    return erf_func(x)


@pointwise_dynamic(promotion_methods=[(0, "INT_TO_FLOAT")])
@triton.jit
def rsqrt_func(x):
    return libdevice.rsqrt(x.to(tl.float32))


def rsqrt(A):
    logger.debug("GEMS RSQRT")
    return rsqrt_func(A)


@pointwise_dynamic(is_tensor=[True, False], promotion_methods=[(0, 1, "BOOL_TO_LONG")])
@triton.jit
def pow_func_tensor_scalar(x, exponent):
    return libdevice.pow(x.to(tl.float32), exponent)


def pow_tensor_scalar(A, exponent):
    logger.debug("GEMS POW_TENSOR_SCALAR")
    return pow_func_tensor_scalar(A, exponent)


@pointwise_dynamic(is_tensor=[False, True], promotion_methods=[(0, 1, "BOOL_TO_LONG")])
@triton.jit
def pow_func_scalar_tensor(base, x):
    return libdevice.pow(base.to(tl.float32), x.to(tl.float32))


def pow_scalar(A, exponent):
    logger.debug("GEMS POW_SCALAR")
    return pow_func_scalar_tensor(A, exponent)


@pointwise_dynamic(promotion_methods=[(0, "INT_TO_FLOAT")])
@triton.jit
def tanh_forward(x):
    return fast_tanh(x.to(tl.float32))


@pointwise_dynamic(promotion_methods=[(0, "INT_TO_FLOAT")])
@triton.jit
def tanh_backward(y, dy):
    return dy.to(tl.float32) * (1.0 - y.to(tl.float32) * y.to(tl.float32))


class Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A):
        logger.debug("GEMS TANH FORWARD")
        if A.requires_grad is True:
            out = tanh_forward(A.to(torch.float32))
            ctx.save_for_backward(out)
            return out.to(A.dtype)
        else:
            out = tanh_forward(A)
            return out

    @staticmethod
    def backward(ctx, out_grad):
        logger.debug("GEMS TANH BACKWARD")
        (out,) = ctx.saved_tensors
        in_grad = tanh_backward(out, out_grad)
        return in_grad


def tanh(A):
    return Tanh.apply(A)


@pointwise_dynamic(promotion_methods=[(0, "INT_TO_FLOAT")])
@triton.jit
def sigmoid_forward(x):
    # fast_dividef keeps this at one MUFU instruction per element
    log2e: tl.constexpr = 1.4426950408889634
    return libdevice.fast_dividef(1.0, 1.0 + tl.exp2(-x.to(tl.float32) * log2e))


@pointwise_dynamic(promotion_methods=[(0, "INT_TO_FLOAT")])
@triton.jit
def sigmoid_backward(y, dy):
    y_f32 = y.to(tl.float32)
    return dy.to(tl.float32) * y_f32 * (1.0 - y_f32)


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A):
        logger.debug("GEMS SIGMOID FORWARD")
        out = sigmoid_forward(A)
        if A.requires_grad:
            ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, out_grad):
        logger.debug("GEMS SIGMOID BACKWARD")
        (out,) = ctx.saved_tensors
        return sigmoid_backward(out, out_grad)


def sigmoid(A):
    return Sigmoid.apply(A)
