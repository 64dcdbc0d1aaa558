#!/usr/bin/env python
##
# @file   profile_ops.py
# @brief  Micro-benchmark of the global placement operators (wirelength,
#         density, DCT) on one design; used to produce the runtime breakdown
#         table in the DREAMPlace TCAD paper.
#
# usage: python benchmarks/profile_ops.py test/ispd2005/adaptec1.json --iters 50 --nvtx
#

import os
import sys
import time
import json
import argparse
import logging
from collections import OrderedDict

import numpy as np
import torch
from torch.profiler import profile, record_function, ProfilerActivity

root_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(root_dir)
sys.path.append(os.path.join(root_dir, "dreamplace"))
import dreamplace.Params as Params
import dreamplace.PlaceDB as PlaceDB
import dreamplace.NonLinearPlace as NonLinearPlace
import dreamplace.PlaceObj as PlaceObj

logger = logging.getLogger("profile_ops")


class CudaTimer(object):
    """Accurate kernel timing with CUDA events.

    time.time() only measures the launch overhead of asynchronous kernels,
    so every measurement is bracketed by events recorded on the current stream.
    """

    def __init__(self, name, use_nvtx=False):
        self.name = name
        self.use_nvtx = use_nvtx
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.elapsed_ms = 0.0

    def __enter__(self):
        if self.use_nvtx:
            torch.cuda.nvtx.range_push(self.name)
        self.start.record()
        return self

    def __exit__(self, exc_type, exc_value, tb):
        self.end.record()
        self.end.synchronize()
        self.elapsed_ms = self.start.elapsed_time(self.end)
        if self.use_nvtx:
            torch.cuda.nvtx.range_pop()
        return False


def parse_args():
    parser = argparse.ArgumentParser(description="profile DREAMPlace operators")
    parser.add_argument("config", help="design json, e.g. test/ispd2005/adaptec1.json")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--nvtx", action="store_true",
                        help="emit NVTX ranges for nsys (nsys profile -t cuda,nvtx ...)")
    parser.add_argument("--torch-profiler", action="store_true",
                        help="also dump a chrome trace with torch.profiler")
    parser.add_argument("--output", default="profile_ops.json")
    return parser.parse_args()


def report_memory(tag):
    alloc = torch.cuda.memory_allocated() / 2**20
    peak = torch.cuda.max_memory_allocated() / 2**20
    logger.info("[%s] allocated %.1f MB, peak %.1f MB" % (tag, alloc, peak))
    return alloc, peak


def bench(fn, name, iters, warmup, use_nvtx):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        with CudaTimer(name, use_nvtx) as t:
            fn()
        times.append(t.elapsed_ms)
    times = np.array(times)
    logger.info("%-28s mean %8.3f ms  std %7.3f ms  min %8.3f ms" %
                (name, times.mean(), times.std(), times.min()))
    return float(times.mean())


def main():
    logging.basicConfig(level=logging.INFO,
                        format='[%(levelname)-7s] %(name)s - %(message)s',
                        stream=sys.stdout)
    args = parse_args()

    params = Params.Params()
    params.load(args.config)
    # operators are profiled on the GPU only
    params.gpu = 1
    params.plot_flag = 0
    torch.backends.cudnn.benchmark = True

    placedb = PlaceDB.PlaceDB()
    placedb(params)

    torch.cuda.reset_peak_memory_stats()
    placer = NonLinearPlace.NonLinearPlace(params, placedb, None)
    report_memory("after init")

    gp_params = params.global_place_stages[0]
    model = PlaceObj.PlaceObj(torch.tensor(8e-5, device=placer.device), params, placedb,
                              placer.data_collections, placer.op_collections,
                              gp_params).to(placer.device)
    pos = placer.pos[0]

    results = OrderedDict()
    results["device"] = torch.cuda.get_device_name(0)
    results["num_nodes"] = placedb.num_nodes
    results["num_pins"] = len(placedb.pin_offset_x)

    def wl_fwd_bwd():
        pos.grad = None
        obj = model.op_collections.wirelength_op(pos)
        obj.backward()

    def density_fwd_bwd():
        pos.grad = None
        obj = model.op_collections.density_op(pos)
        obj.backward()

    def hpwl_only():
        with torch.no_grad():
            model.op_collections.hpwl_op(pos)

    def overflow_only():
        with torch.no_grad():
            model.op_collections.density_overflow_op(pos)

    results["wirelength"] = bench(wl_fwd_bwd, "wirelength fwd+bwd", args.iters, args.warmup, args.nvtx)
    results["density"] = bench(density_fwd_bwd, "density fwd+bwd", args.iters, args.warmup, args.nvtx)
    results["hpwl"] = bench(hpwl_only, "hpwl", args.iters, args.warmup, args.nvtx)
    results["overflow"] = bench(overflow_only, "density overflow", args.iters, args.warmup, args.nvtx)
    results["alloc_mb"], results["peak_mb"] = report_memory("after bench")

    if args.torch_profiler:
        trace_file = os.path.splitext(args.output)[0] + ".trace.json"
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     record_shapes=True) as prof:
            for _ in range(5):
                with record_function("wirelength"):
                    wl_fwd_bwd()
                with record_function("density"):
                    density_fwd_bwd()
            torch.cuda.synchronize()  # flush kernels before the profiler stops
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20))
        prof.export_chrome_trace(trace_file)
        logger.info("chrome trace written to %s" % trace_file)

    with open(args.output, "w") as f:
        json.dump(results, f, indent=2)
    logger.info("results written to %s" % args.output)
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
