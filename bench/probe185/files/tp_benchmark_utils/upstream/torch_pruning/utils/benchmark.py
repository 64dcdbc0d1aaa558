import time

import numpy as np
import torch

__all__ = ["measure_latency", "measure_memory", "measure_fps", "measure_throughput", "benchmark_pruned"]


def _forward(model, example_inputs, run_fn=None):
    if run_fn is not None:
        return run_fn(model, example_inputs)
    if isinstance(example_inputs, dict):
        return model(**example_inputs)
    if isinstance(example_inputs, (tuple, list)):
        return model(*example_inputs)
    return model(example_inputs)


@torch.no_grad()
def measure_latency(model, example_inputs, repeat=300, warmup=50, run_fn=None):
    """Per-iteration latency in milliseconds measured with CUDA events.

    Returns (mean, std). The model and inputs must already live on the GPU.
    """
    model.eval()
    latency = []
    for _ in range(warmup):
        _ = _forward(model, example_inputs, run_fn)

    for i in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        _ = _forward(model, example_inputs, run_fn)
        end.record()
        torch.cuda.synchronize()
        latency.append(start.elapsed_time(end))
    latency = np.array(latency)
    return latency.mean(), latency.std()


@torch.no_grad()
def measure_memory(model, example_inputs, device=None, run_fn=None):
    """Peak allocated memory (bytes) of one forward pass."""
    torch.cuda.reset_peak_memory_stats()
    model.eval()
    _ = _forward(model, example_inputs, run_fn)
    return torch.cuda.max_memory_allocated(device=device)


@torch.no_grad()
def measure_fps(model, example_inputs, repeat=300, warmup=50, run_fn=None):
    model.eval()
    # Warmup
    for _ in range(warmup):
        _ = _forward(model, example_inputs, run_fn)

    # Timing
    torch.cuda.synchronize()  # flush warmup work
    start = time.perf_counter()
    for _ in range(repeat):
        _ = _forward(model, example_inputs, run_fn)
    torch.cuda.synchronize()  # wait for the timed loop
    elapsed = time.perf_counter() - start
    return repeat / elapsed


@torch.no_grad()
def measure_throughput(model, example_inputs, repeat=300, warmup=50, run_fn=None):
    if isinstance(example_inputs, (list, tuple)):
        batch_size = example_inputs[0].shape[0]
    elif isinstance(example_inputs, dict):
        batch_size = next(iter(example_inputs.values())).shape[0]
    else:
        batch_size = example_inputs.shape[0]
    return batch_size * measure_fps(model, example_inputs, repeat=repeat, warmup=warmup, run_fn=run_fn)


def benchmark_pruned(base_model, pruned_model, example_inputs, repeat=100, device="cuda"):
    """Compare latency / memory of a model before and after pruning.

    Both models are moved to `device` (GPU by default) and `example_inputs`
    are cloned there so the caller's tensors are left untouched.
    """
    if isinstance(example_inputs, torch.Tensor):
        inputs = example_inputs.to(device)
    else:
        inputs = [x.to(device) for x in example_inputs]
    base_model = base_model.to(device)
    pruned_model = pruned_model.to(device)

    results = {}
    for name, m in (("base", base_model), ("pruned", pruned_model)):
        lat_mean, lat_std = measure_latency(m, inputs, repeat=repeat)
        mem = measure_memory(m, inputs, device=device)
        results[name] = {
            "latency_ms": float(lat_mean),
            "latency_std_ms": float(lat_std),
            "peak_mem_mb": mem / 2**20,
        }
        torch.cuda.empty_cache()
    results["speedup"] = results["base"]["latency_ms"] / max(results["pruned"]["latency_ms"], 1e-9)
    return results
