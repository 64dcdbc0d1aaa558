import gc
import logging
import os
import time
from typing import Any, Generator, List, Optional, Tuple

import pytest
import torch
import triton
import yaml

import flag_gems

from .attri_util import BenchLevel, BenchmarkMetrics, BenchmarkResult, OperationAttribute

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

device = flag_gems.device
DEFAULT_WARMUP_COUNT = 1000
DEFAULT_ITER_COUNT = 100


def get_gpu_name():
    return torch.cuda.get_device_name(torch.cuda.current_device())


def get_peak_memory_mb():
    return torch.cuda.max_memory_allocated() / (1024 * 1024)


def get_gpu_memory_mb():
    free, total = torch.cuda.mem_get_info()
    return (total - free) / (1024 * 1024)


class Benchmark:
    DEFAULT_METRICS = ["latency_base", "latency", "speedup"]
    DEFAULT_DTYPES = [torch.float16, torch.bfloat16, torch.float32]

    def __init__(self, op_name, torch_op, dtypes=None, is_backward=False, **kwargs):
        self.op_name = op_name
        self.torch_op = torch_op
        self.gems_op = None
        self.is_backward = is_backward
        self.to_bench_dtypes = dtypes or self.DEFAULT_DTYPES
        self.cpu_mode = os.environ.get("CPU_MODE", "0") == "1"
        self.use_cudagraph = os.environ.get("USE_CUDAGRAPH", "0") == "1"
        self.results = []

    def set_gems(self, gems_op):
        self.gems_op = gems_op

    def get_latency(self, op, *args, **kwargs):
        fn = lambda: op(*args, **kwargs)
        if self.is_backward:
            out = fn()
            dout = torch.randn_like(out)
            fn = lambda: out.backward(dout, retain_graph=True)
        if self.cpu_mode:
            for i in range(DEFAULT_WARMUP_COUNT):
                fn()
            torch.cuda.synchronize()
            start = time.time()
            for i in range(DEFAULT_ITER_COUNT):
                fn()
            torch.cuda.synchronize(device)
            end = time.time()
            latency = (end - start) / DEFAULT_ITER_COUNT * 1000
        elif self.use_cudagraph:
            latency = triton.testing.do_bench_cudagraph(fn, rep=DEFAULT_ITER_COUNT, return_mode="median")
        else:
            latency = triton.testing.do_bench(
                fn,
                warmup=DEFAULT_WARMUP_COUNT,
                rep=DEFAULT_ITER_COUNT,
                return_mode="median",
            )
        return latency

    def get_latency_events(self, op, *args, **kwargs):
        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)
        for _ in range(10):
            op(*args, **kwargs)
        torch.cuda.nvtx.range_push(self.op_name)
        start_event.record()
        for _ in range(DEFAULT_ITER_COUNT):
            op(*args, **kwargs)
        end_event.record()
        torch.cuda.nvtx.range_pop()
        end_event.synchronize()
        return start_event.elapsed_time(end_event) / DEFAULT_ITER_COUNT

    def get_input_iter(self, cur_dtype) -> Generator:
        for shape in [(1024, 1024), (4096, 4096), (1024, 65536)]:
            yield torch.randn(shape, dtype=cur_dtype, device=device),

    def run(self):
        for dtype in self.to_bench_dtypes:
            metrics = []
            for input in self.get_input_iter(dtype):
                base = self.get_latency(self.torch_op, *input)
                with flag_gems.use_gems():
                    gems = self.get_latency(self.gems_op or self.torch_op, *input)
                metrics.append(BenchmarkMetrics(latency_base=base, latency=gems, speedup=base / gems))
            self.results.append(
                BenchmarkResult(
                    op_name=self.op_name,
                    dtype=str(dtype),
                    mode="cpu" if self.cpu_mode else "cuda",
                    level=BenchLevel.COMPREHENSIVE,
                    result=metrics,
                )
            )
            torch.cuda.empty_cache()
            gc.collect()
        logging.info("%s on %s: %s", self.op_name, get_gpu_name(), self.results)
