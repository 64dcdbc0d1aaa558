import pytest
import torch

import flag_gems

from .accuracy_utils import (
    DIM_LIST,
    FLOAT_DTYPES,
    REDUCTION_SHAPES,
    gems_assert_close,
    to_reference,
)
from .conftest import QUICK_MODE

DEVICE = torch.device("cuda", torch.cuda.current_device())


@pytest.mark.group_norm
@pytest.mark.native_group_norm
@pytest.mark.parametrize(
    "N, C, H, W, num_groups",
    [
        (16, 3, 16, 16, 1),
        (32, 32, 32, 32, 8),
        (1, 32, 32, 32, 8),
        (1, 32, 32, 32, 16),
        (1, 64, 32, 32, 16),
        (1, 64, 32, 32, 32),
        (1, 64, 32, 32, 64),
    ],
)
@pytest.mark.parametrize("wb_none", [False, True])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_accuracy_groupnorm(N, C, H, W, num_groups, dtype, wb_none):
    HW = H * W
    inp = torch.randn(size=(N, C, H, W), dtype=dtype, device=DEVICE, requires_grad=True)
    if wb_none:
        weight = None
        bias = None
    else:
        weight = torch.randn(size=(C,), dtype=dtype, device=DEVICE, requires_grad=True)
        bias = torch.randn(size=(C,), dtype=dtype, device=DEVICE, requires_grad=True)
    eps = 1e-5

    ref_inp = to_reference(inp, True)
    ref_weight = to_reference(weight, True)
    ref_bias = to_reference(bias, True)

    ref_out = torch.nn.functional.group_norm(
        ref_inp, num_groups, weight=ref_weight, bias=ref_bias, eps=eps
    )
    with flag_gems.use_gems():
        res_out = torch.group_norm(inp, num_groups, weight=weight, bias=bias, eps=eps)
    gems_assert_close(res_out, ref_out, dtype)

    out_grad = torch.randn_like(inp)
    ref_grad = to_reference(out_grad, True)

    if wb_none:
        (ref_in_grad,) = torch.autograd.grad(ref_out, ref_inp, ref_grad)
        with flag_gems.use_gems():
            (res_in_grad,) = torch.autograd.grad(res_out, inp, out_grad)
        gems_assert_close(res_in_grad, ref_in_grad, dtype, reduce_dim=HW)
    else:
        (ref_in_grad, ref_weight_grad, ref_bias_grad) = torch.autograd.grad(
            ref_out, (ref_inp, ref_weight, ref_bias), ref_grad
        )
        with flag_gems.use_gems():
            (res_in_grad, res_weight_grad, res_bias_grad) = torch.autograd.grad(
                res_out, (inp, weight, bias), out_grad
            )
        group_size = C // num_groups
        gems_assert_close(res_in_grad, ref_in_grad, dtype, reduce_dim=group_size * HW)
        gems_assert_close(res_weight_grad, ref_weight_grad, dtype, reduce_dim=N * HW)
        gems_assert_close(res_bias_grad, ref_bias_grad, dtype, reduce_dim=N * HW)


LAYERNORM_SHAPES = (
    [(2, 40999)]
    if QUICK_MODE
    else [(1, 40999), (4096, 256), (4096, 100), (100, 40499), (200, 2560), (1024, 8192)]
)


@pytest.mark.layer_norm
@pytest.mark.native_layer_norm
@pytest.mark.parametrize("shape", LAYERNORM_SHAPES)
@pytest.mark.parametrize("wb_none", [False, True])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_accuracy_layernorm(shape, dtype, wb_none):
    M = shape[0]
    N = shape[1]
    layer_shape = [N]
    inp = torch.randn(shape, dtype=dtype, device=DEVICE, requires_grad=True)
    if wb_none:
        weight = None
        bias = None
    else:
        weight = torch.randn(layer_shape, dtype=dtype, device=DEVICE, requires_grad=True)
        bias = torch.randn(layer_shape, dtype=dtype, device=DEVICE, requires_grad=True)
    eps = 1e-5

    ref_inp = to_reference(inp, True)
    ref_weight = to_reference(weight, True)
    ref_bias = to_reference(bias, True)

    ref_out = torch.layer_norm(ref_inp, layer_shape, weight=ref_weight, bias=ref_bias, eps=eps)
    with flag_gems.use_gems():
        res_out = torch.layer_norm(inp, layer_shape, weight=weight, bias=bias, eps=eps)

    gems_assert_close(res_out, ref_out, dtype)

    out_grad = torch.randn_like(inp)
    ref_grad = to_reference(out_grad, True)

    if wb_none:
        (ref_in_grad,) = torch.autograd.grad(ref_out, ref_inp, ref_grad)
        with flag_gems.use_gems():
            (res_in_grad,) = torch.autograd.grad(res_out, inp, out_grad)
        gems_assert_close(res_in_grad, ref_in_grad, dtype, reduce_dim=N)
    else:
        (ref_in_grad, ref_weight_grad, ref_bias_grad) = torch.autograd.grad(
            ref_out, (ref_inp, ref_weight, ref_bias), ref_grad
        )
        with flag_gems.use_gems():
            (res_in_grad, res_weight_grad, res_bias_grad) = torch.autograd.grad(
                res_out, (inp, weight, bias), out_grad
            )
        gems_assert_close(res_in_grad, ref_in_grad, dtype, reduce_dim=N)
        gems_assert_close(res_weight_grad, ref_weight_grad, dtype, reduce_dim=M)
        gems_assert_close(res_bias_grad, ref_bias_grad, dtype, reduce_dim=M)


@pytest.mark.softmax
@pytest.mark.parametrize("shape", REDUCTION_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("dim", DIM_LIST)
def test_accuracy_softmax(shape, dtype, dim):
    inp = torch.randn(shape, dtype=dtype, device=DEVICE, requires_grad=True)
    ref_inp = to_reference(inp, True)
    ref_out = torch.nn.functional.softmax(ref_inp, dim=dim)
    with flag_gems.use_gems():
        res_out = torch.nn.functional.softmax(inp, dim=dim)
    gems_assert_close(res_out, ref_out, dtype)

    out_grad = torch.randn_like(res_out)
    ref_grad = to_reference(out_grad, True)
    (ref_in_grad,) = torch.autograd.grad(ref_out, ref_inp, ref_grad)
    with flag_gems.use_gems():
        (res_in_grad,) = torch.autograd.grad(res_out, inp, out_grad)
    gems_assert_close(res_in_grad, ref_in_grad, dtype, reduce_dim=shape[dim])


@pytest.mark.log_softmax
@pytest.mark.parametrize("shape", REDUCTION_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_accuracy_log_softmax(shape, dtype):
    dim = 1
    inp = torch.randn(shape, dtype=dtype, device=DEVICE, requires_grad=True)
    ref_inp = to_reference(inp, True)
    ref_out = torch.nn.functional.log_softmax(ref_inp, dim=dim)
    with flag_gems.use_gems():
        res_out = torch.nn.functional.log_softmax(inp, dim=dim)
    gems_assert_close(res_out, ref_out, dtype)


@pytest.mark.rms_norm
@pytest.mark.parametrize("shape", [(2, 4096), (16, 8192), (1024, 5120)])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_accuracy_rmsnorm(shape, dtype):
    N = shape[1]
    inp = torch.randn(shape, dtype=dtype, device=DEVICE)
    weight = torch.randn(N, dtype=dtype, device=DEVICE)
    eps = 1e-5

    ref_inp = to_reference(inp, True)
    ref_weight = to_reference(weight, True)

    def _torch_rms_norm(x, w, eps):
        variance = x.pow(2).mean(-1, keepdim=True)
        return w * (x * torch.rsqrt(variance + eps))

    ref_out = _torch_rms_norm(ref_inp, ref_weight, eps)
    res_out = flag_gems.rms_norm(inp, list(weight.shape), weight=weight, eps=eps)
    gems_assert_close(res_out, ref_out, dtype)


@pytest.mark.gelu
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_under_autocast(approximate):
    # flag_gems ops must respect autocast: the output dtype follows the autocast dtype
    x = torch.randn(64, 1024, device="cuda", requires_grad=True)
    w = torch.randn(1024, 1024, device="cuda")
    ref = torch.nn.functional.gelu((x @ w).half().float(), approximate=approximate)
    with flag_gems.use_gems(), torch.autocast(device_type="cuda", dtype=torch.float16):
        y = torch.nn.functional.gelu(x @ w, approximate=approximate)
    assert y.dtype == torch.float16
    gems_assert_close(y.float(), ref, torch.float16, reduce_dim=1024)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA for GradScaler")
def test_layernorm_with_grad_scaler():
    ln = torch.nn.LayerNorm(4096).cuda()
    opt = torch.optim.SGD(ln.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()
    x = torch.randn(8, 4096, device=DEVICE)
    with flag_gems.use_gems():
        with torch.cuda.amp.autocast(dtype=torch.bfloat16):
            loss = ln(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    assert all(torch.isfinite(p).all() for p in ln.parameters())
