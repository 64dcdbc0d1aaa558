"""
Kernels for activation functions with fused dropout.
"""


import triton
import triton.language as tl

try:
    # Triton >= 3.0 moved the CUDA libdevice wrappers here
    from triton.language.extra.cuda import libdevice
except ImportError:
    # Triton 2.x
    from triton.language import math as libdevice

from .dropout_kernels import apply_dropout, apply_dropout_grad
from .utils import element_wise_kernel_configs


@triton.jit
def sigmoid(input):
    """
    Applies sigmoid to the input.

    Args:
        input: Input. The input must be loaded and cannot be a pointer.

    Returns:
        Input transformed by sigmoid.
    """
    return (1 / (1 + tl.exp(-input)))


@triton.jit
def sigmoid_grad(input):
    """
    Calculates the gradient of sigmoid.
    """
    output_sigmoid = sigmoid(input)
    return output_sigmoid * (1 - output_sigmoid)


@triton.jit
def tanh(input):
    """
    Applies tanh to the input.
    """
    return 2 * sigmoid(2 * input) - 1


@triton.jit
def tanh_grad(input):
    """
    Calculates the gradient of tanh.
    """
    output_tanh = tanh(input)
    return 1 - output_tanh * output_tanh


@triton.jit
def tanh_approx(input):
    """
    Hardware tanh approximation (one MUFU.TANH instruction on sm_75+),
    accurate to ~1e-3 which is plenty for the tanh-GELU approximation.
    """
    return tl.inline_asm_elementwise(
        "tanh.approx.f32 $0, $1;", "=r,r", [input],
        dtype=tl.float32, is_pure=True, pack=1,
        )


@triton.jit
def relu(input):
    """
    Applies ReLU to the input.
    """
    return tl.maximum(0, input)


@triton.jit
def relu_grad(input):
    """
    Calculates the gradient of ReLU.
    """
    return tl.where(input <= 0, 0, 1)


@triton.jit
def gelu(input):
    """
    Applies GELU to the input (exact, erf based).
    """
    cdf = 0.5 * (1 + libdevice.erf(0.7071067811865476 * input))
    return cdf * input


@triton.jit
def gelu_grad(input):
    """
    Calculates the gradient of GELU.
    """
    cdf = 0.5 * (1 + libdevice.erf(0.7071067811865476 * input))
    cdf_grad = 0.39894228 * tl.exp(-0.5 * input * input)
    return cdf_grad * input + cdf


@triton.jit
def gelu_tanh(input):
    """
    Applies the tanh approximation of GELU to the input.
    """
    inner = 0.7978845608028654 * (input + 0.044715 * input * input * input)
    return 0.5 * input * (1 + tanh_approx(inner))


@triton.jit
def silu(input):
    """
    Applies SiLU to the input.
    """
    return (input * sigmoid(input))


@triton.jit
def silu_grad(input):
    """
    Calculates the gradient of SiLU.
    """
    output_sigmoid = sigmoid(input)
    return (output_sigmoid * (input * (1 - output_sigmoid) + 1))


@triton.jit
def mish(input):
    """
    Applies Mish to the input.
    """
    return input * tanh(libdevice.log1p(tl.exp(input)))


@triton.jit
def leaky_relu(input, negative_slope):
    """
    Applies leaky ReLU to the input.
    """
    return relu(input) + negative_slope * tl.minimum(0, input)


@triton.jit
def apply_act_func(input, drop_p, seed, offset, param,
                   act_func: tl.constexpr, dropout: tl.constexpr):
    """
    Applies an activation function to the input, optionally fusing dropout.
    """
    if act_func == 'sigmoid':
        input = input.to(tl.float32)
        output = sigmoid(input)

    elif act_func == 'tanh':
        input = input.to(tl.float32)
        output = tanh(input)

    elif act_func == 'relu':
        output = relu(input)

    elif act_func == 'gelu':
        input = input.to(tl.float32)
        output = gelu(input)

    elif act_func == 'gelu_tanh':
        input = input.to(tl.float32)
        output = gelu_tanh(input)

    elif act_func == 'silu':
        input = input.to(tl.float32)
        output = silu(input)

    elif act_func == 'mish':
        input = input.to(tl.float32)
        output = mish(input)

    elif act_func == 'leaky_relu':
        output = leaky_relu(input, param)

    if dropout:
        output = apply_dropout(output, drop_p, seed, offset)

    return output


@triton.autotune(
    configs=element_wise_kernel_configs(),
    key=['size'],
)
@triton.jit
def act_func_forward_kernel(
    input_pointer, output_pointer, size,
    drop_p, seed, param,
    act_func: tl.constexpr, dropout: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    ):
    """
    Applies an activation function to the input, optionally fusing dropout.
    """
    # This program processes BLOCK_SIZE rows.
    pid = tl.program_id(axis=0)
    offset = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offset < size

    input = tl.load(input_pointer + offset, mask=mask)
    tl.store(output_pointer + offset,
             apply_act_func(input, drop_p, seed, offset, param, act_func, dropout),
             mask=mask)


@triton.autotune(
    configs=element_wise_kernel_configs(),
    key=['size'],
)
@triton.jit
def act_func_backward_kernel(
    output_grad_pointer, input_pointer, input_grad_pointer, size,
    drop_p, seed, param,
    act_func: tl.constexpr, dropout: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    ):
    """
    Calculates the input gradient of an activation function.
    """
    # This program processes BLOCK_SIZE rows.
    pid = tl.program_id(axis=0)
    offset = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offset < size

    output_grad = tl.load(output_grad_pointer + offset, mask=mask)
    input = tl.load(input_pointer + offset, mask=mask).to(tl.float32)

    if act_func == 'sigmoid':
        grad = sigmoid_grad(input)
    elif act_func == 'tanh':
        grad = tanh_grad(input)
    elif act_func == 'relu':
        grad = relu_grad(input)
    elif act_func == 'gelu':
        grad = gelu_grad(input)
    elif act_func == 'silu':
        grad = silu_grad(input)
    else:
        grad = tl.where(input <= 0, param, 1)

    if dropout:
        output_grad = apply_dropout_grad(output_grad, drop_p, seed, offset)

    tl.store(input_grad_pointer + offset, output_grad * grad, mask=mask)
