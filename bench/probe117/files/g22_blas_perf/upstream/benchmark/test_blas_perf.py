import itertools
from typing import Generator

import pytest
import torch

import flag_gems

from .attri_util import DEFAULT_METRICS, FLOAT_DTYPES, BenchLevel
from .conftest import Config
from .performance_utils import Benchmark


class BlasBenchmark(Benchmark):
    """
    benchmark for blas
    """

    DEFAULT_METRICS = DEFAULT_METRICS[:] + ["tflops"]
    DEFAULT_SHAPES = [(2, 384, 384, 384), (2, 4096, 4096, 4096), (16, 1024, 1024, 1024)]
    DEFAULT_SHAPE_DESC = "B, M, N, K"

    def get_input_iter(self, cur_dtype) -> Generator:
        for b, m, n, k in self.shapes:
            yield from self.input_fn(b, m, n, k, cur_dtype, self.device)

        if Config.bench_level == BenchLevel.COMPREHENSIVE:
            for m, n, k in itertools.product([127, 1000, 4097], repeat=3):
                yield from self.input_fn(4, m, n, k, cur_dtype, self.device)

    def set_more_shapes(self):
        split_k_shapes = [
            (1, m, m, k)
            for m in [16 * i for i in range(1, 5)]
            for k in [4096 * i for i in range(1, 9)]
        ]
        llama_shapes = [(1, 1024, 1024, 11008), (1, 1024, 11008, 4096)]
        return split_k_shapes + llama_shapes

    def get_tflops(self, op, *args, **kwargs):
        total_flops = 0
        if self.op_name == "addmm":
            total_flops = args[1].shape[0] * args[1].shape[1] * args[2].shape[1] * 2
        elif self.op_name == "bmm":
            total_flops = args[0].shape[0] * args[0].shape[1] * args[0].shape[2] * args[1].shape[2] * 2
        else:
            total_flops = args[0].shape[0] * args[0].shape[1] * args[1].shape[1] * 2
        return total_flops


def addmm_input_fn(b, m, n, k, cur_dtype, device):
    inp1 = torch.randn([m, k], dtype=cur_dtype, device=device)
    inp2 = torch.randn([k, n], dtype=cur_dtype, device=device)
    bias = torch.randn([m, n], dtype=cur_dtype, device=device)
    yield bias, inp1, inp2,


def bmm_input_fn(b, m, n, k, cur_dtype, device):
    inp1 = torch.randn([b, m, k], dtype=cur_dtype, device=device)
    inp2 = torch.randn([b, k, n], dtype=cur_dtype, device=device)
    yield inp1, inp2


def mm_input_fn(b, m, n, k, cur_dtype, device):
    inp1 = torch.randn([m, k], dtype=cur_dtype, device=device)
    inp2 = torch.randn([k, n], dtype=cur_dtype, device=device)
    yield inp1, inp2


@pytest.mark.parametrize(
    "op_name, torch_op, input_fn",
    [
        pytest.param("addmm", torch.addmm, addmm_input_fn, marks=pytest.mark.addmm),
        pytest.param("bmm", torch.bmm, bmm_input_fn, marks=pytest.mark.bmm),
        pytest.param("mm", torch.Tensor.mm, mm_input_fn, marks=pytest.mark.mm),
    ],
)
def test_blas_benchmark(op_name, torch_op, input_fn):
    bench = BlasBenchmark(
        input_fn=input_fn, op_name=op_name, torch_op=torch_op, dtypes=FLOAT_DTYPES
    )
    bench.input_fn = input_fn
    bench.run()


@pytest.mark.mm
def test_mm_vs_cublas_tf32():
    """Reference point: cuBLAS with TF32 enabled is what most users actually get."""
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        bench = BlasBenchmark(
            op_name="mm_tf32", torch_op=torch.Tensor.mm, dtypes=[torch.float32]
        )
        bench.input_fn = mm_input_fn
        bench.run()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False


@pytest.mark.mm
@pytest.mark.skipif(
    torch.cuda.get_device_capability() < (9, 0), reason="FP8 GEMM needs sm_90"
)
def test_mm_fp8_reference():
    m = n = k = 4096
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    scale = torch.tensor(1.0, device="cuda")
    bench = BlasBenchmark(op_name="mm_fp8_cublaslt", torch_op=torch._scaled_mm, dtypes=[])
    torch.cuda.synchronize()
    ms = bench.get_latency(torch._scaled_mm, a, b, scale_a=scale, scale_b=scale,
                           out_dtype=torch.bfloat16)
    print(f"cuBLASLt fp8 mm {m}x{n}x{k}: {ms:.3f} ms, "
          f"{2 * m * n * k / ms / 1e9:.1f} TFLOPS")
    with flag_gems.use_gems():
        pass
