#!/usr/bin/env python3

# Copyright (c) Facebook, Inc. and its affiliates.
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

r"""Helper functions for profiling. Profilers like Nvidia Nsight can capture the
time spent in annotated ranges.

Example usage for marking ranges. For convenience, there are three syntax
options; they're all functionally equivalent:

# use the decorator to mark an entire function as a range
@profiling_utils.RangeContext("my_function")
def my_function():

    # use range_push/range_pop explicitly
    range_push("create and sort widgets")
    create_widget()
    create_widget()
    sort_widgets()
    range_pop()

    # use RangeContext and a with statement
    with profiling_utils.RangeContext("print and save widgets"):
        print_widgets()
        save_widgets()

Example of capturing an Nsight Systems profile with Habitat:
export HABITAT_PROFILING=1
export OMP_NUM_THREADS=4
path/to/nvidia/nsight-systems/bin/nsys profile --sample=none --trace=nvtx,cuda
--trace-fork-before-exec=true --output=my_profile python my_program.py
# look for my_profile.qdrep in working directory
"""
import os
from contextlib import ContextDecorator

try:
    import torch
except ImportError:
    torch = None

# Note that env_var is intentionally read only once, at module import time.
env_var = os.environ.get("HABITAT_PROFILING", "0")
enable_profiling = env_var != "0"
if enable_profiling:
    print("HABITAT_PROFILING is enabled (env var HABITAT_PROFILING=" + env_var + ")")
    # Synchronizing after every range makes the CPU-side timings line up
    # with the GPU kernels in the timeline, at the cost of throughput.
    sync_ranges = os.environ.get("HABITAT_PROFILING_SYNC", "0") != "0"
else:
    sync_ranges = False

# Optional support for capturing a subset of the run, based on step
# counting. See configure().
_start_step = -1
_stop_step = -1
_step = 0
_capture_active = True

# Tracks the depth of the range stack (see range_push/range_pop). Used to
# detect unbalanced ranges when a capture window closes.
_range_depth = 0


def configure(capture_start_step=-1, num_steps_to_capture=-1):
    r"""Wrapper for NVTX that only profiles a window of steps.

    capture_start_step: The step at which to start capturing. -1 means
    capture from the very beginning of the program.
    num_steps_to_capture: How many steps to capture. -1 means capture
    until the program exits.

    Nsight should be invoked with --capture-range=nvtx
    --nvtx-capture=habitat_capture_range so that the captured range
    matches the window configured here.
    """
    global _start_step
    global _stop_step
    global _capture_active

    _start_step = capture_start_step
    if num_steps_to_capture == -1:
        _stop_step = -1
    else:
        _stop_step = capture_start_step + num_steps_to_capture
    _capture_active = _start_step == -1


def on_start_step():
    r"""Call this at the start of each training/evaluation step."""
    global _step
    global _capture_active

    if not enable_profiling:
        return

    if _step == _start_step:
        _capture_active = True
        range_push("habitat_capture_range")
    elif _step == _stop_step and _capture_active:
        range_pop()
        _capture_active = False
        if _range_depth != 0:
            print(
                "warning: profiling capture ended with {} unbalanced ranges".format(
                    _range_depth
                )
            )

    _step += 1


def range_push(msg: str) -> None:
    r"""Annotates the start of a range for profiling. Requires
    HABITAT_PROFILING environment variable to be set, otherwise the function is
    a no-op. Pushes a range onto a stack of nested ranges. Every range_push
    should have a corresponding range_pop. Attached profilers can capture the
    time spent in ranges."
    """
    global _range_depth
    if not (enable_profiling and _capture_active):
        return
    if torch is None:
        return
    if sync_ranges:
        torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(msg)
    _range_depth += 1


def range_pop() -> None:
    r"""Annotates the end of a range for profiling. See also range_push."""
    global _range_depth
    if not (enable_profiling and _capture_active):
        return
    if torch is None:
        return
    if sync_ranges:
        torch.cuda.synchronize()  # close the range after the kernels finish
    torch.cuda.nvtx.range_pop()
    _range_depth -= 1


def mark(msg: str) -> None:
    r"""Drops an instantaneous marker into the timeline (no range)."""
    if not (enable_profiling and _capture_active) or torch is None:
        return
    torch.cuda.nvtx.mark(msg)


class RangeContext(ContextDecorator):
    r"""Annotate a range for profiling. Use as a function decorator or in a with
    statement. See also range_push.
    """

    def __init__(self, msg: str) -> None:
        self._msg = msg

    def __enter__(self) -> "RangeContext":
        range_push(self._msg)
        return self

    def __exit__(self, *exc) -> None:
        range_pop()
