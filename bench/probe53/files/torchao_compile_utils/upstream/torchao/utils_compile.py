"""Compile / benchmark helpers shared by the quantization and sparsity APIs.

Kept import-light: only torch is imported at module level so that
`from torchao.utils_compile import benchmark_model` works in CPU-only CI.
"""
import functools
import os
import time
from typing import Any, Callable, Dict, Optional, Tuple

import torch

__all__ = [
    "recommended_inductor_config_setter",
    "cutlass_gemm_config_setter",
    "benchmark_model",
    "profiler_runner",
    "get_compute_capability",
    "is_sm_at_least_89",
    "is_sm_at_least_90",
    "compile_for_decode",
    "safe_int_mm",
]


def recommended_inductor_config_setter():
    """
    Set inductor config to use the following optimizations which have been showed to improve performance for quantized models:
        coordinate_descent_tuning = True
        coordinate_descent_check_all_directions = True
        force_fuse_int_mm_with_mul = True
        fx_graph_cache = True
        triton.unique_kernel_names = True
        torch.set_float32_matmul_precision("high")
    """
    torch._inductor.config.coordinate_descent_tuning = True
    torch._inductor.config.coordinate_descent_check_all_directions = True
    torch._inductor.config.force_fuse_int_mm_with_mul = True
    torch._inductor.config.fx_graph_cache = True
    torch._inductor.config.triton.unique_kernel_names = True
    torch.set_float32_matmul_precision("high")


def cutlass_gemm_config_setter(arch: Optional[str] = None):
    """Let max-autotune also try CUTLASS GEMM templates (Hopper w8a8 / fp8 rowwise)."""
    import torch._inductor.config as inductor_config

    inductor_config.max_autotune = True
    inductor_config.max_autotune_gemm_backends = "ATEN,TRITON,CUTLASS"
    inductor_config.cuda.cutlass_dir = os.environ.get("CUTLASS_DIR", "/opt/cutlass")
    inductor_config.cuda.arch = arch or "90"


def compile_for_decode(fn: Callable, dynamic: bool = False) -> Callable:
    """torch.compile a single-token decode step; CUDA graphs hide the launch overhead."""
    import torch._inductor.config as inductor_config

    inductor_config.triton.cudagraph_trees = True
    return torch.compile(fn, mode="reduce-overhead", fullgraph=True, dynamic=dynamic)


def get_compute_capability() -> float:
    if torch.cuda.is_available():
        capability = torch.cuda.get_device_capability()
        return float(f"{capability[0]}.{capability[1]}")
    return 0.0


def is_sm_at_least_89() -> bool:
    return (
        torch.cuda.is_available()
        and torch.version.cuda is not None
        and torch.cuda.get_device_capability() >= (8, 9)
    )


def is_sm_at_least_90() -> bool:
    return (
        torch.cuda.is_available()
        and torch.version.cuda is not None
        and torch.cuda.get_device_capability() >= (9, 0)
    )


def safe_int_mm(input: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    """torch._int_mm has shape constraints (m > 16, k/n multiples of 8); fall back to an int32 matmul."""
    if (
        input.device.type == "cuda"
        and input.shape[0] > 16
        and input.shape[1] % 8 == 0
        and mat2.shape[1] % 8 == 0
    ):
        return torch._int_mm(input, mat2)
    return torch.matmul(input.to(torch.int32), mat2.to(torch.int32))


def _device_type_of(model: torch.nn.Module) -> str:
    try:
        return next(model.parameters()).device.type
    except StopIteration:
        return "cpu"


def benchmark_model(model, num_runs: int, args: Tuple = (), kwargs: Optional[Dict[str, Any]] = None,
                    device_type: Optional[str] = None) -> float:
    """Average wall time per run in milliseconds."""
    if kwargs is None:
        kwargs = {}
    if device_type is None:
        device_type = _device_type_of(model) if isinstance(model, torch.nn.Module) else "cuda"

    if device_type == "cuda":
        torch.cuda.synchronize()
        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)
        start_event.record()

        # benchmark
        for _ in range(num_runs):
            with torch.autograd.profiler.record_function("timed region"):
                model(*args, **kwargs)
                torch.cuda.synchronize()  # per-run sync keeps the events honest

        end_event.record()
        torch.cuda.synchronize()  # wait for end_event
        return start_event.elapsed_time(end_event) / num_runs

    elif device_type == "mps":
        torch.mps.synchronize()
        start_time = time.time()
        for _ in range(num_runs):
            model(*args, **kwargs)
            torch.mps.synchronize()
        return (time.time() - start_time) / num_runs * 1000

    elif device_type == "cpu":
        start_time = time.time()
        for _ in range(num_runs):
            model(*args, **kwargs)
        return (time.time() - start_time) / num_runs * 1000


def profiler_runner(path: str, fn: Callable, *args, **kwargs):
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
        record_shapes=True,
    ) as prof:
        result = fn(*args, **kwargs)
    prof.export_chrome_trace(path)
    return result


@functools.lru_cache(maxsize=None)
def _int_mm_supported() -> bool:
    # int8 tensor-core GEMM needs sm80+ for the shapes the autoquantizer generates
    return get_compute_capability() >= 8.0
