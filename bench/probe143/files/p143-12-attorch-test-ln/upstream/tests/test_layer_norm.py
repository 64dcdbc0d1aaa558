from typing import Tuple

import pytest
import torch
from torch import autocast
from torch import nn

import attorch
from .utils import assert_close, default_shapes


DEVICE = 'cuda'

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason='attorch kernels need a GPU')


def create_input(
    shape: Tuple[int, ...],
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    requires_grad: bool = True,
    ) -> torch.Tensor:
    """
    Creates a random input tensor on the GPU, seeded for reproducibility.
    """
    torch.manual_seed(seed)
    return torch.randn(shape, dtype=dtype, device=DEVICE,
                       requires_grad=requires_grad)


def create_input_like(input: torch.Tensor, seed: int = 1) -> torch.Tensor:
    torch.manual_seed(seed)
    return torch.randn_like(input)


@pytest.mark.parametrize('shape', default_shapes(min_dim=2, max_dim=4))
@pytest.mark.parametrize('eps', [1e-5, 1e-6])
@pytest.mark.parametrize('elementwise_affine', [False, True])
@pytest.mark.parametrize('bias', [False, True])
@pytest.mark.parametrize('input_dtype', [torch.float32, torch.float16])
@pytest.mark.parametrize('amp', [False, True])
def test_layer_norm_layer(
    shape: Tuple[int, ...],
    eps: float,
    elementwise_affine: bool,
    bias: bool,
    input_dtype: bool,
    amp: bool,
    ) -> None:
    if input_dtype is torch.float16 and not amp:
        return

    attorch_input = create_input(shape, dtype=input_dtype)
    pytorch_input = create_input(shape, dtype=input_dtype)

    torch.manual_seed(0)
    attorch_layer_norm = attorch.LayerNorm(shape[-1], eps, elementwise_affine, bias)

    torch.manual_seed(0)
    pytorch_layer_norm = nn.LayerNorm(shape[-1], eps, elementwise_affine, bias,
                                      device=DEVICE)

    with autocast('cuda', enabled=amp):
        attorch_output = attorch_layer_norm(attorch_input)
        pytorch_output = pytorch_layer_norm(pytorch_input)

    assert_close((attorch_output, pytorch_output), rtol=1e-3, atol=1e-3)

    attorch_output.backward(create_input_like(attorch_output))
    pytorch_output.backward(create_input_like(attorch_output))

    weight_grad_pair = ((attorch_layer_norm.weight.grad, pytorch_layer_norm.weight.grad)
                        if elementwise_affine else (None, None))
    bias_grad_pair = ((attorch_layer_norm.bias.grad, pytorch_layer_norm.bias.grad)
                      if elementwise_affine and bias else (None, None))
    assert_close((attorch_input.grad, pytorch_input.grad),
                 weight_grad_pair, bias_grad_pair,
                 rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize('feat_dim', [1, 7, 64, 1000, 4096, 12288])
def test_layer_norm_wide_rows(feat_dim: int) -> None:
    input = create_input((32, feat_dim))
    attorch_layer_norm = attorch.LayerNorm(feat_dim)
    pytorch_layer_norm = nn.LayerNorm(feat_dim).cuda()

    attorch_output = attorch_layer_norm(input)
    pytorch_output = pytorch_layer_norm(input)
    assert_close((attorch_output, pytorch_output), rtol=1e-4, atol=1e-4)


def test_layer_norm_falls_back_on_cpu() -> None:
    # the module must still work (through PyTorch) for CPU tensors
    layer = attorch.LayerNorm(16, device='cpu')
    input = torch.randn(4, 16)
    output = layer(input)
    expected = nn.functional.layer_norm(input, (16,), layer.weight, layer.bias, layer.eps)
    assert torch.allclose(output, expected)


@pytest.mark.parametrize('shape', [(8, 128), (3, 5, 768)])
def test_layer_norm_stats_dtype(shape: Tuple[int, ...]) -> None:
    input = create_input(shape, dtype=torch.float16, requires_grad=False)
    layer = attorch.LayerNorm(shape[-1], dtype=torch.float16)
    with torch.no_grad(), autocast('cuda'):
        output = layer(input)
    assert output.dtype == torch.float16
    torch.cuda.synchronize()
