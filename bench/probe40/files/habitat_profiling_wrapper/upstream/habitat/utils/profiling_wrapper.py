#!/usr/bin/env python3

# Copyright (c) Meta Platforms, Inc. and its affiliates.
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

r"""Wrappers for habitat_sim profiling_utils functions. The wrappers are no-ops
if habitat_sim isn't installed.

Example of capturing an Nsight Systems profile with Habitat-lab:
export HABITAT_PROFILING=1
export NSYS_NVTX_PROFILER_REGISTER_ONLY=0  # required when using capture range
path/to/nvidia/nsight-systems/bin/nsys profile --sample=none --trace=nvtx --trace-fork-before-exec=true --capture-range=nvtx -p "habitat_capture_range" --stop-on-range-end=true --output=my_profile python habitat_baselines/run.py \
    --exp-config habitat_baselines/config/pointnav/ppo_pointnav.yaml \
    --run-type train \
    habitat_baselines.profiling.capture_start_step=200 \
    habitat_baselines.profiling.num_steps_to_capture=100
# look for my_profile.qdrep in working directory
"""

import os
import time
from collections import defaultdict
from contextlib import ContextDecorator
from typing import Dict, List, Optional

import torch

try:
    from habitat_sim.utils import profiling_utils
except ImportError:
    profiling_utils = None

_env_var_logged = False
_enable_profiling = os.environ.get("HABITAT_PROFILING", "0") != "0"
_sync_device = os.environ.get("HABITAT_PROFILING_SYNC", "0") != "0"

_step_count = 0
_capture_start_step = -1
_num_steps_to_capture = -1
_range_stack: List[str] = []
_range_times: Dict[str, List[float]] = defaultdict(list)
_range_starts: List[float] = []


def _helper_function_for_env_var_logging() -> None:
    global _env_var_logged
    if not _env_var_logged and _enable_profiling:
        print(
            "HABITAT_PROFILING is set; NVTX ranges will be emitted for Nsight Systems "
            "(HABITAT_PROFILING_SYNC=1 additionally synchronizes the GPU at every range)."
        )
        _env_var_logged = True


def configure(capture_start_step: int = -1, num_steps_to_capture: int = -1) -> None:
    r"""Wrapper for habitat_sim profiling_utils.configure"""
    global _capture_start_step, _num_steps_to_capture
    _capture_start_step = capture_start_step
    _num_steps_to_capture = num_steps_to_capture
    if profiling_utils:
        profiling_utils.configure(capture_start_step, num_steps_to_capture)


def _is_capturing() -> bool:
    if not _enable_profiling:
        return False
    if _capture_start_step == -1:
        return True
    return _capture_start_step <= _step_count < _capture_start_step + _num_steps_to_capture


def on_start_step() -> None:
    r"""Wrapper for habitat_sim profiling_utils.on_start_step"""
    global _step_count
    _helper_function_for_env_var_logging()
    if _enable_profiling and _step_count == _capture_start_step:
        # open the capture range that nsys --capture-range=nvtx waits for
        torch.cuda.nvtx.range_push("habitat_capture_range")
    if _enable_profiling and _step_count == _capture_start_step + _num_steps_to_capture:
        torch.cuda.nvtx.range_pop()  # habitat_capture_range
    _step_count += 1
    if profiling_utils:
        profiling_utils.on_start_step()


def range_push(msg: str) -> None:
    r"""Wrapper for habitat_sim profiling_utils.range_push"""
    if not _is_capturing():
        return
    if _sync_device:
        torch.cuda.synchronize()  # flush queued kernels before the range opens
    torch.cuda.nvtx.range_push(msg)
    _range_stack.append(msg)
    _range_starts.append(time.perf_counter())


def range_pop() -> None:
    r"""Wrapper for habitat_sim profiling_utils.range_pop"""
    if not _is_capturing() or not _range_stack:
        return
    if _sync_device:
        torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    msg = _range_stack.pop()
    _range_times[msg].append(time.perf_counter() - _range_starts.pop())


def range_summary() -> Dict[str, float]:
    """Mean wall time of every range seen so far (seconds)."""
    return {k: sum(v) / len(v) for k, v in _range_times.items() if v}


class RangeContext(ContextDecorator):
    r"""Annotate a range for profiling. Use as a function decorator or in a
    with-statement. Can be nested. The range will appear in a
    Nsight Systems profile, and also in the text summary if HABITAT_PROFILING
    is set.

    Example:
        @profiling_wrapper.RangeContext("my_function")
        def my_function():
            ...

        with profiling_wrapper.RangeContext("my_scope"):
            ...
    """

    def __init__(self, msg: str) -> None:
        self._msg = msg

    def __enter__(self) -> "RangeContext":
        range_push(self._msg)
        return self

    def __exit__(self, *exc) -> None:
        range_pop()


class DeviceTimer:
    """Times a region on the device stream with CUDA events (falls back to wall time on CPU)."""

    def __init__(self, name: str, device: Optional[torch.device] = None) -> None:
        self.name = name
        self.use_events = device is not None and device.type == "cuda"
        self.elapsed_ms = 0.0

    def __enter__(self) -> "DeviceTimer":
        if self.use_events:
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)
            self._start.record()
        else:
            self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        if self.use_events:
            self._end.record()
            self._end.synchronize()
            self.elapsed_ms = self._start.elapsed_time(self._end)
        else:
            self.elapsed_ms = (time.perf_counter() - self._t0) * 1000.0
        _range_times[self.name].append(self.elapsed_ms / 1000.0)
