"""
Utilities to measure metrics of a model (latency, throughput, peak memory, accuracy).
Shared by the userbenchmarks (`test_bench`, `torch-nightly`, `optim`).
"""
import copy
import dataclasses
import pathlib
import time
from typing import Any, Dict, List, Optional, Tuple

import torch

from torchbenchmark import ModelTask
from torchbenchmark.util.experiment.instantiator import TorchBenchModelConfig
from torchbenchmark.util.model import BenchmarkModel

WARMUP_ROUNDS = 10
BENCHMARK_ITERS = 15
MEMPROF_ITER = 2
NANOSECONDS_PER_MILLISECONDS = 1_000_000.0


@dataclasses.dataclass
class TorchBenchModelMetrics:
    latencies: List[float]
    throughputs: List[float]
    cpu_peak_mem: Optional[float]
    gpu_peak_mem: Optional[float]
    ttfb: Optional[float]
    pt2_compilation_time: Optional[float]
    pt2_graph_breaks: Optional[float]
    model_flops: Optional[float]


def _sync(device: str):
    # everything but CPU runs asynchronously and must be drained before reading the clock
    if device == "cuda":
        torch.cuda.synchronize()


def get_latencies(func, device: str, nwarmup=WARMUP_ROUNDS, num_iter=BENCHMARK_ITERS) -> List[float]:
    "Run one step of the model, and return the latency in milliseconds."
    # Warm-up `nwarmup` rounds
    for _i in range(nwarmup):
        func()
    result_summary = []
    for _i in range(num_iter):
        _sync(device)
        t0 = time.time_ns()
        func()
        _sync(device)
        t1 = time.time_ns()
        result_summary.append((t1 - t0) / NANOSECONDS_PER_MILLISECONDS)
    return result_summary


def get_event_latencies(func, device: str, num_iter=BENCHMARK_ITERS) -> List[float]:
    """Device-side timing with events; more precise than wall clock for short kernels."""
    if device != "cuda":
        return get_latencies(func, device, num_iter=num_iter)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(num_iter)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(num_iter)]
    for _ in range(WARMUP_ROUNDS):
        func()
    for i in range(num_iter):
        starts[i].record()
        func()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def get_peak_memory(func, device: str, num_iter=MEMPROF_ITER, export_metrics_file="",
                    metrics_needed=None, metrics_gpu_backend="default", cpu_monitored_pid=None
                    ) -> Tuple[Optional[float], Optional[str], Optional[float]]:
    "Run one step of the model, and return the peak memory in MB."
    from components.model_analyzer.TorchBenchAnalyzer import ModelAnalyzer

    new_metrics_needed = [m for m in (metrics_needed or []) if m in ["cpu_peak_mem", "gpu_peak_mem"]]
    if not new_metrics_needed:
        raise ValueError(f"Expected metrics_needed to be non-empty, get: {metrics_needed}")
    mem_model_analyzer = ModelAnalyzer(export_metrics_file, new_metrics_needed, metrics_gpu_backend,
                                       cpu_monitored_pid)
    continue_num_iter = BENCHMARK_ITERS - num_iter

    def work_func():
        if device == "cuda":  # keep the monitor window aligned with the work
            torch.cuda.synchronize()
            func()
            torch.cuda.synchronize()
        else:
            func()

    t0 = time.time_ns()
    work_func()
    t1 = time.time_ns()
    # if total execution time is less than 15ms, we run the model for BENCHMARK_ITERS times
    if (t1 - t0) < 15 * NANOSECONDS_PER_MILLISECONDS:
        num_iter = BENCHMARK_ITERS
    else:
        continue_num_iter = 0
    mem_model_analyzer.start_monitor()
    for _i in range(num_iter):
        work_func()
    mem_model_analyzer.stop_monitor()
    mem_model_analyzer.aggregate()
    device_id = None
    gpu_peak_mem = None
    cpu_peak_mem = None
    if "gpu_peak_mem" in new_metrics_needed:
        device_id, gpu_peak_mem = mem_model_analyzer.calculate_gpu_peak_mem()
    if "cpu_peak_mem" in new_metrics_needed:
        cpu_peak_mem = mem_model_analyzer.calculate_cpu_peak_mem()
    if export_metrics_file:
        mem_model_analyzer.update_export_name("_%d" % continue_num_iter)
        mem_model_analyzer.export_all_records_to_csv()
    return cpu_peak_mem, device_id, gpu_peak_mem


def get_allocator_peak_mem(func, device: str) -> Optional[float]:
    """Peak memory as seen by the caching allocator (cheaper than the NVML monitor)."""
    if not device.startswith("cuda"):
        return None
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    func()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2 ** 20


def get_model_test_metrics(model: BenchmarkModel, metrics=None, export_metrics_file=False,
                           metrics_gpu_backend="nvml", nwarmup=WARMUP_ROUNDS,
                           num_iter=BENCHMARK_ITERS) -> TorchBenchModelMetrics:
    metrics = metrics or []
    latencies = None
    throughputs = None
    cpu_peak_mem = None
    gpu_peak_mem = None
    ttfb = None
    pt2_compilation_time = None
    pt2_graph_breaks = None
    model_flops = None
    if not (isinstance(model, BenchmarkModel) or isinstance(model, ModelTask)):
        raise ValueError(f"Expected BenchmarkModel or ModelTask, get type: {type(model)}")
    model_pid = None if isinstance(model, BenchmarkModel) else model.worker.proc_pid()
    device = model.device if isinstance(model, BenchmarkModel) else model.get_model_attribute("device")
    if "latencies" in metrics or "throughputs" in metrics:
        latencies = get_latencies(model.invoke, device, nwarmup=nwarmup, num_iter=num_iter)
    if "cpu_peak_mem" in metrics or "gpu_peak_mem" in metrics:
        cpu_peak_mem, _device_id, gpu_peak_mem = get_peak_memory(
            model.invoke, device, export_metrics_file=export_metrics_file, metrics_needed=metrics,
            metrics_gpu_backend=metrics_gpu_backend, cpu_monitored_pid=model_pid)
    if "throughputs" in metrics:
        throughputs = [model.batch_size * 1000 / latency for latency in latencies]
    if "pt2_compilation_time" in metrics:
        pt2_compilation_time = model.get_model_attribute("pt2_compilation_time") \
            if isinstance(model, ModelTask) else model.pt2_compilation_time
    if "pt2_graph_breaks" in metrics:
        pt2_graph_breaks = model.get_model_attribute("pt2_graph_breaks") \
            if isinstance(model, ModelTask) else model.pt2_graph_breaks
    if "model_flops" in metrics:
        model_flops = get_model_flops(model)
    return TorchBenchModelMetrics(latencies, throughputs, cpu_peak_mem, gpu_peak_mem, ttfb,
                                  pt2_compilation_time, pt2_graph_breaks, model_flops)


def get_model_flops(model: BenchmarkModel) -> float:
    "Run one step of the model and return the model total flops."
    from torch.utils.flop_counter import FlopCounterMode

    flop_counter = FlopCounterMode(display=False)

    def work_func():
        if model.device == "cuda":
            torch.cuda.synchronize()
            model.invoke()
            torch.cuda.synchronize()
        else:
            model.invoke()

    with flop_counter:
        work_func()
    total_flops = sum([v for _, v in flop_counter.flop_counts["Global"].items()])
    return total_flops


def get_model_accuracy(model_config: TorchBenchModelConfig, isolated: bool = True) -> str:
    import torchbenchmark.util.experiment.instantiator as instantiator

    accuracy_model_config = copy.deepcopy(model_config)
    accuracy_model_config.extra_args.extend(["--accuracy"])
    if isolated:
        model_task = instantiator.load_model_isolated(accuracy_model_config)
        accuracy = model_task.get_model_attribute("accuracy")
        del model_task
        return accuracy
    model = instantiator.load_model(accuracy_model_config)
    return model.accuracy
