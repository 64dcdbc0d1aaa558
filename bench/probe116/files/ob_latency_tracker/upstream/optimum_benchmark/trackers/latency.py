import time
from contextlib import contextmanager
from logging import getLogger
from typing import List

import torch

LOGGER = getLogger("latency")


class LatencyTracker:
    def __init__(self, device: str, backend: str):
        self.device = device
        self.backend = backend
        self.latencies: List[float] = []

        if self.device == "cuda" and self.backend == "pytorch":
            LOGGER.info("\t+ Tracking Pytorch CUDA latency")
        else:
            LOGGER.info("\t+ Tracking CPU latency")

    def reset(self):
        self.latencies = []

    @contextmanager
    def track(self):
        if self.backend == "pytorch" and self.device == "cuda":
            yield from self._cuda_pytorch_latency()
        else:
            yield from self._cpu_latency()

    def _cuda_pytorch_latency(self):
        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)

        torch.cuda.synchronize()
        start_event.record(stream=torch.cuda.current_stream())
        yield
        end_event.record(stream=torch.cuda.current_stream())
        torch.cuda.synchronize()  # make sure end_event has actually been reached

        latency_ms = start_event.elapsed_time(end_event)
        latency = latency_ms / 1e3

        LOGGER.debug(f"\t+ Tracked Pytorch CUDA latency: {latency:.2e}s")
        self.latencies.append(latency)

    def _cpu_latency(self):
        start = time.perf_counter_ns()
        yield
        end = time.perf_counter_ns()

        latency_ns = end - start
        latency = latency_ns / 1e9

        LOGGER.debug(f"\t+ Tracked CPU latency: {latency:.2e}s")
        self.latencies.append(latency)

    def get_total_count(self):
        return len(self.latencies)

    def get_total_latency(self):
        return sum(self.latencies)

    def get_latencies_list(self) -> List[float]:
        return self.latencies


class LatencyLogitsProcessor:
    """Logits processor that records per-token latency during `generate()`."""

    def __init__(self, device: str, backend: str):
        self.device = device
        self.backend = backend
        self.reset()

    def reset(self):
        self.t0 = time.perf_counter()
        self.events: List[float] = []

    def __call__(self, input_ids, scores):
        if self.device == "cuda":
            torch.cuda.synchronize(self.device)
        self.events.append(time.perf_counter())
        return scores

    def get_latencies_list(self) -> List[float]:
        latencies = [self.events[0] - self.t0]
        latencies += [self.events[i + 1] - self.events[i] for i in range(len(self.events) - 1)]
        return latencies
