#  Copyright 2022 Lefebvre Sarrut
#
#  Licensed under the Apache License, Version 2.0 (the "License");
#  you may not use this file except in compliance with the License.
#  You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
#  Unless required by applicable law or agreed to in writing, software
#  distributed under the License is distributed on an "AS IS" BASIS,
#  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#  See the License for the specific language governing permissions and
#  limitations under the License.
#

import random
from typing import Callable

import numpy as np
import pytest
import torch

from kernl.optimizer.cuda_graph import cuda_graphs_wrapper
from kernl.implementations.linear_layer import linear_layer


def set_seed(seed: int = 0):
    random.seed(seed)
    np.random.seed(seed)
    torch.cuda.manual_seed_all(seed)


def assert_all_close(a: torch.Tensor, b: torch.Tensor, rtol=0, atol=1e-1) -> None:
    """
    Check that all elements of tensors a and b are within provided thresholds.
    """
    assert a.shape == b.shape, f"Shapes don't match: {a.shape} != {b.shape}"
    assert a.dtype == b.dtype, f"Dtypes don't match: {a.dtype} != {b.dtype}"
    assert a.device == b.device, f"Devices don't match: {a.device} != {b.device}"
    max_abs_diff = torch.max(torch.abs(a - b))
    rel_diff = torch.abs(a / b)
    max_rel_diff = torch.max(rel_diff[torch.logical_not(torch.isnan(rel_diff))])
    mismatch_elements = torch.sum(torch.abs(a - b) > atol + rtol * torch.abs(b))
    nb_elements = torch.numel(a)
    msg = (
        f"Differences: "
        f"{max_abs_diff:.3f} (max abs), "
        f"{max_rel_diff:.3f} (max rel), "
        f"{mismatch_elements}/{nb_elements} (mismatch elements)"
    )
    assert torch.allclose(a, b, rtol=rtol, atol=atol), msg


def get_pytorch_activation(activation: str) -> Callable:
    if activation == "gelu":
        return torch.nn.functional.gelu
    elif activation == "tanh":
        return torch.tanh
    elif activation == "relu":
        return torch.relu
    elif activation == "fast_gelu":
        return lambda x: torch.nn.functional.gelu(x, approximate="tanh")
    elif activation == "":
        return lambda x: x
    else:
        raise ValueError(f"Unknown activation: {activation}")


implementations = {
    "pytorch": lambda weight, bias, activation: lambda x: get_pytorch_activation(activation)(
        torch.nn.functional.linear(x, weight, bias)
    ),
    "triton": lambda weight, bias, activation: lambda x: linear_layer(x, weight, bias, activation),
}


requires_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="requires a CUDA GPU")


@requires_gpu
@pytest.mark.parametrize("contiguous", [True, False], ids=["contiguous", "non-contiguous"])
@pytest.mark.parametrize("bias", [True, False], ids=["with_bias", "no_bias"])
@pytest.mark.parametrize("activation", ["", "tanh", "gelu", "fast_gelu", "relu"], ids=lambda x: f"act:{x}")
@pytest.mark.parametrize(
    "shape",
    [(1, 8, 8, 8)] + [(bs, M, 768, 768) for bs in [1, 16] for M in [8, 16, 128, 256, 512]],
    ids=lambda s: "x".join(map(str, s)),
)
@pytest.mark.parametrize("cuda_graphs", [False, True], ids=["no_cuda_graphs", "cuda_graphs"])
@pytest.mark.parametrize("implementation", ["triton", "pytorch"])
def test_benchmark(
    benchmark,
    implementation: str,
    cuda_graphs: bool,
    shape: tuple,
    bias: bool,
    activation: str,
    contiguous: bool,
):
    batch, M, N, K = shape
    set_seed()

    # order of dimensions is wrong so we force contiguous call
    x = torch.randn((batch, K, M), device="cuda", dtype=torch.float32, requires_grad=False)
    x = x.mT
    if contiguous:
        x = x.contiguous()
    else:
        assert not x.is_contiguous()
    factory_kwargs = {"device": "cuda", "dtype": torch.float32, "requires_grad": False}
    layer_weight = torch.randn((N, K), **factory_kwargs)
    layer_bias = torch.randn((K,), **factory_kwargs) if bias else None
    pytorch_layer_activation = get_pytorch_activation(activation)
    expected = pytorch_layer_activation(torch.nn.functional.linear(x, layer_weight, layer_bias))

    # tensors casting
    layer_weight = layer_weight.to(dtype=torch.float16)
    if layer_bias is not None:
        layer_bias = layer_bias.to(dtype=torch.float16)
    x = x.to(dtype=torch.float16)

    fn = implementations[implementation](layer_weight, layer_bias, activation)
    if cuda_graphs:
        run = cuda_graphs_wrapper(model=fn, inputs=[x])
        # CUDA graphs wraps output in a tuple
        fn = lambda tensor: run([tensor])[0]  # noqa: E731

    value = benchmark(fn, x)

    assert_all_close(expected, value.float(), rtol=1e-1, atol=1e-1)


@requires_gpu
@pytest.mark.parametrize("size", [32, 64, 128, 256])
def test_fp16_casting_under_autocast(size: int):
    set_seed()
    x = torch.randn((4, size, size), device="cuda")
    weight = torch.randn((size, size), device="cuda", dtype=torch.float16)
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        out = linear_layer(x, weight, None, "")
    assert out.dtype == torch.float16
    ref = torch.nn.functional.linear(x.half(), weight)
    assert_all_close(ref.float(), out.float(), atol=1e-1)


@requires_gpu
def test_non_multiple_of_block():
    set_seed()
    x = torch.randn((3, 17, 129), device=torch.device("cuda:0"), dtype=torch.float16)
    w = torch.randn((255, 129), device=x.device, dtype=torch.float16)
    b = torch.randn((255,), device=x.device, dtype=torch.float16)
    out = linear_layer(x, w, b, "relu")
    ref = torch.relu(torch.nn.functional.linear(x.float(), w.float(), b.float()))
    assert_all_close(ref, out.float(), atol=2e-1)


def test_cpu_tensors_are_rejected():
    # the kernel is GPU only; make sure the error message is explicit
    x = torch.randn((2, 16, 16), dtype=torch.float16)
    w = torch.randn((16, 16), dtype=torch.float16)
    with pytest.raises(Exception):
        linear_layer(x, w, None, "")
