# Fused bias + activation kernels used by the MLP blocks.
# Style follows the xformers / torchao Triton activation helpers.

import math
from enum import Enum
from typing import Optional

import torch
import triton
import triton.language as tl


class Activation(str, Enum):
    GELU = "gelu"
    GELU_TANH = "gelu_tanh"
    SQUARED_RELU = "squared_relu"
    SILU = "silu"


_kAlpha = math.sqrt(2.0 / math.pi)


@triton.jit
def tanh_approx(x):
    # PTX tanh.approx.f32 is ~2x faster than the libdevice tanh on sm_75+
    return tl.inline_asm_elementwise(
        asm="tanh.approx.f32 $0, $1;",
        constraints="=r,r",
        args=[x],
        dtype=tl.float32,
        is_pure=True,
        pack=1,
    )


@triton.jit
def gelu_erf(x):
    return x * 0.5 * (1.0 + tl.extra.cuda.libdevice.erf(x / 1.4142135623730951))


@triton.jit
def gelu_tanh(x):
    return 0.5 * x * (1.0 + tanh_approx(_kAlpha * (x + 0.044715 * x * x * x)))


@triton.jit
def squared_relu(x):
    x_ = tl.where(x >= 0, x, 0.0)
    return x_ * x_


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def fast_exp(x):
    return tl.math.exp2(x * 1.4426950408889634)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 1024}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_N": 2048}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_N": 4096}, num_warps=16, num_stages=1),
    ],
    key=["N"],
)
@triton.jit
def _bias_act_fwd_kernel(
    Y, X, BIAS,
    stride_ym, stride_xm,
    N,
    ACTIVATION: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
    if HAS_BIAS:
        b = tl.load(BIAS + cols, mask=mask, other=0.0).to(tl.float32)
        x += b
    if ACTIVATION == "gelu":
        y = gelu_erf(x)
    elif ACTIVATION == "gelu_tanh":
        y = gelu_tanh(x)
    elif ACTIVATION == "squared_relu":
        y = squared_relu(x)
    elif ACTIVATION == "silu":
        y = silu(x)
    else:
        y = x
    tl.store(Y + row * stride_ym + cols, y.to(Y.dtype.element_ty), mask=mask)


def bias_act(x: torch.Tensor, bias: Optional[torch.Tensor], activation: Activation) -> torch.Tensor:
    assert x.is_cuda, "fused bias_act requires a CUDA tensor"
    x_2d = x.reshape(-1, x.shape[-1])
    M, N = x_2d.shape
    y = torch.empty_like(x_2d)
    grid = lambda meta: (M, triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
    _bias_act_fwd_kernel[grid](
        y, x_2d, bias if bias is not None else x_2d,
        y.stride(0), x_2d.stride(0),
        N,
        ACTIVATION=activation.value,
        HAS_BIAS=bias is not None,
    )
    return y.view_as(x)


def bias_act_reference(x: torch.Tensor, bias: Optional[torch.Tensor], activation: Activation) -> torch.Tensor:
    if bias is not None:
        x = x + bias
    if activation == Activation.GELU:
        return torch.nn.functional.gelu(x)
    if activation == Activation.GELU_TANH:
        return torch.nn.functional.gelu(x, approximate="tanh")
    if activation == Activation.SQUARED_RELU:
        return torch.relu(x) ** 2
    if activation == Activation.SILU:
        return torch.nn.functional.silu(x)
    return x


class FusedBiasAct(torch.nn.Module):
    def __init__(self, dim: int, activation: Activation = Activation.GELU, bias: bool = True):
        super().__init__()
        self.activation = activation
        self.bias = torch.nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and not torch.jit.is_scripting():
            return bias_act(x, self.bias, self.activation)
        return bias_act_reference(x, self.bias, self.activation)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 8192, device="cuda", dtype=torch.float16)
    b = torch.randn(8192, device="cuda", dtype=torch.float16)
    for act in Activation:
        out = bias_act(x, b, act)
        ref = bias_act_reference(x.float(), b.float(), act).half()
        print(act.value, (out - ref).abs().max().item())
