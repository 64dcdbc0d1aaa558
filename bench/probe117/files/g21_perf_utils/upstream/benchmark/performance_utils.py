"""Shared benchmark harness: times torch vs flag_gems for a set of shapes/dtypes and
prints a table (or json lines with --record log).

Timing modes
  kernel   triton.testing.do_bench over the op call (default)
  graph    capture the op into a CUDA graph and replay it; removes launch overhead
  e2e      wall clock with explicit synchronization, includes python overhead
"""
import gc
import json
import logging
import os
import subprocess
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Generator, List, Optional, Tuple

import pytest
import torch
import triton

import flag_gems

from .attri_util import (
    BOOL_DTYPES,
    DEFAULT_METRICS,
    FLOAT_DTYPES,
    BenchLevel,
    BenchmarkMetrics,
    BenchmarkResult,
    OperationAttribute,
)
from .conftest import Config

torch_backend_device = flag_gems.runtime.torch_device_fn
device = "cuda"

logger = logging.getLogger(__name__)


def gpu_clock_info() -> dict:
    """Query current SM / memory clocks so results taken with boost disabled can be
    told apart from results taken with it on."""
    try:
        out = subprocess.check_output(
            [
                "nvidia-smi",
                "--query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.limit",
                "--format=csv,noheader,nounits",
                "-i",
                os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0],
            ],
            text=True,
        )
    except (FileNotFoundError, subprocess.CalledProcessError):
        return {}
    sm, mem, max_sm, power = [x.strip() for x in out.strip().split(",")]
    return {"sm_clock": int(sm), "mem_clock": int(mem), "max_sm_clock": int(max_sm),
            "power_limit": float(power)}


def environment_summary() -> dict:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "gpu": props.name,
        "sm_count": props.multi_processor_count,
        "total_memory_gb": round(props.total_memory / 2**30, 1),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton.__version__,
        "flag_gems": flag_gems.__version__,
        **gpu_clock_info(),
    }


@dataclass
class BenchResultRow:
    op_name: str
    dtype: str
    shape: str
    latency_base: float
    latency: float
    speedup: float
    tflops: Optional[float] = None
    extra: dict = field(default_factory=dict)


class Benchmark:
    device: str = device
    DEFAULT_METRICS = DEFAULT_METRICS
    DEFAULT_DTYPES = FLOAT_DTYPES
    DEFAULT_SHAPES = [(1024 * 1024 * 1024,), (64, 64), (4096, 4096), (64, 512, 512)]
    DEFAULT_SHAPE_DESC = "M, N"
    DEFAULT_SHAPE_FILES = "core_shapes.yaml"

    def __init__(
        self,
        op_name,
        torch_op,
        dtypes=None,
        is_backward=False,
        is_inplace=False,
        **kwargs,
    ):
        self.op_name = op_name
        if is_backward:
            self.op_name += " backward"
        self.torch_op = torch_op
        self.gems_op = None
        self.is_backward = is_backward
        self.is_inplace = is_inplace
        self._input_iter = None
        self.to_bench_dtypes = dtypes or self.DEFAULT_DTYPES
        self.shapes = list(self.DEFAULT_SHAPES)
        self.shape_desc = self.DEFAULT_SHAPE_DESC
        self.previous_dtype = None
        self.kwargs = kwargs
        self.results: List[BenchResultRow] = []

    def set_gems(self, gems_op):
        self.gems_op = gems_op

    def get_input_iter(self, cur_dtype) -> Generator:
        for shape in self.shapes:
            yield from self.input_generator(shape, cur_dtype, self.device)

    def input_generator(self, shape, dtype, device):
        inp = generate_tensor_input(shape, dtype, device)
        yield inp,

    def unpack_to_args_kwargs(self, input_tuple: Tuple[Any, ...]):
        args = []
        kwargs = {}
        for item in input_tuple:
            if isinstance(item, torch.Tensor) or isinstance(item, (int, float)):
                args.append(item)
            elif isinstance(item, dict):
                kwargs.update(item)
        if self.is_backward:
            args = [
                (
                    a.clone().requires_grad_()
                    if torch.is_tensor(a) and torch.is_floating_point(a)
                    else a
                )
                for a in args
            ]
        return args, kwargs

    def get_latency(self, op, *args, **kwargs):
        fn = lambda: op(*args, **kwargs)  # noqa: E731
        if self.is_backward:
            out = fn()
            dout = torch.randn_like(out)
            fn = lambda: out.backward(dout, retain_graph=True)  # noqa: E731
        if Config.mode == "graph":
            return self._graph_latency(fn)
        if Config.mode == "e2e":
            return self._wall_latency(fn)
        return triton.testing.do_bench(
            fn, warmup=Config.warm_up, rep=Config.repetition, return_mode="median"
        )

    def _wall_latency(self, fn):
        sync = torch.cuda.synchronize
        for _ in range(Config.warm_up):
            fn()
        sync()
        start = time.perf_counter()
        for _ in range(Config.repetition):
            fn()
        sync()
        return (time.perf_counter() - start) * 1e3 / Config.repetition

    def _graph_latency(self, fn):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(Config.repetition):
            g.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / Config.repetition

    def get_tflops(self, op, *args, **kwargs):
        return None

    def run(self):
        if Config.query:
            print(json.dumps(environment_summary(), indent=2))
        for dtype in self.to_bench_dtypes:
            for input_tuple in self.get_input_iter(dtype):
                args, kwargs = self.unpack_to_args_kwargs(input_tuple)
                base = self.get_latency(self.torch_op, *args, **kwargs)
                if self.gems_op:
                    lat = self.get_latency(self.gems_op, *args, **kwargs)
                else:
                    with flag_gems.use_gems():
                        lat = self.get_latency(self.torch_op, *args, **kwargs)
                shape = [tuple(a.shape) for a in args if torch.is_tensor(a)]
                row = BenchResultRow(
                    op_name=self.op_name,
                    dtype=str(dtype),
                    shape=str(shape),
                    latency_base=base,
                    latency=lat,
                    speedup=base / lat if lat else 0.0,
                    tflops=self.get_tflops(self.torch_op, *args, **kwargs),
                )
                self.results.append(row)
                del args, kwargs
                gc.collect()
                torch.cuda.empty_cache()
        self.report()

    def report(self):
        if Config.record_log:
            for r in self.results:
                logger.info(json.dumps(asdict(r)))
            return
        print(f"\nOperator: {self.op_name}  ({self.shape_desc})")
        print(f"{'dtype':<16}{'shape':<40}{'torch ms':>12}{'gems ms':>12}{'speedup':>10}")
        for r in self.results:
            print(f"{r.dtype:<16}{r.shape:<40}{r.latency_base:>12.4f}{r.latency:>12.4f}"
                  f"{r.speedup:>10.3f}")


def generate_tensor_input(shape, dtype, device):
    if dtype in FLOAT_DTYPES:
        return torch.randn(shape, dtype=dtype, device=device)
    elif dtype in BOOL_DTYPES:
        return torch.randint(0, 2, shape, dtype=dtype, device=device)
    return torch.randint(torch.iinfo(dtype).min, torch.iinfo(dtype).max, shape,
                         dtype=dtype, device="cpu").to(device)


def binary_input_fn(shape, cur_dtype, device):
    inp1 = generate_tensor_input(shape, cur_dtype, device)
    inp2 = generate_tensor_input(shape, cur_dtype, device)
    yield inp1, inp2


def unary_input_fn(shape, cur_dtype, device):
    yield generate_tensor_input(shape, cur_dtype, device),


@pytest.fixture(scope="module", autouse=True)
def _reset_peak_memory():
    torch.cuda.reset_peak_memory_stats()
    yield
    peak = torch.cuda.max_memory_allocated() / 2**20
    logger.info("peak memory during module: %.1f MiB", peak)
