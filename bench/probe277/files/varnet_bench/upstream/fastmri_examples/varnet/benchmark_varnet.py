"""Latency / memory benchmark for E2E-VarNet inference.

Measures per-slice latency with CUDA events (so host-side Python overhead in
the cascades is included but asynchronous launch jitter is not), peak GPU
memory, and optionally dumps a profiler trace for one forward pass.

    python benchmark_varnet.py --num_cascades 12 --coils 15 --shape 640 368 --iters 50
    python benchmark_varnet.py --num_cascades 12 --amp --profile --trace_dir traces/
"""
import argparse
import json
import os
import platform
import statistics

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from fastmri.data.subsample import EquispacedMaskFractionFunc
from fastmri.models import VarNet


def parse_args():
    p = argparse.ArgumentParser(description="E2E-VarNet inference benchmark")
    p.add_argument("--num_cascades", type=int, default=12)
    p.add_argument("--chans", type=int, default=18)
    p.add_argument("--pools", type=int, default=4)
    p.add_argument("--sens_chans", type=int, default=8)
    p.add_argument("--sens_pools", type=int, default=4)
    p.add_argument("--coils", type=int, default=15)
    p.add_argument("--shape", type=int, nargs=2, default=[640, 368])
    p.add_argument("--batch_size", type=int, default=1)
    p.add_argument("--acceleration", type=int, default=4)
    p.add_argument("--center_fraction", type=float, default=0.08)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--amp", action="store_true", help="fp16 autocast")
    p.add_argument("--tf32", action="store_true", help="allow TF32 matmul/conv on Ampere")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2.0)")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--trace_dir", type=str, default="traces")
    p.add_argument("--checkpoint", type=str, default=None)
    p.add_argument("--out_json", type=str, default=None)
    return p.parse_args()


def make_inputs(args, device):
    """Random multi-coil k-space + an equispaced mask, shaped like fastMRI knee."""
    h, w = args.shape
    kspace = torch.randn(args.batch_size, args.coils, h, w, 2)
    mask_func = EquispacedMaskFractionFunc([args.center_fraction], [args.acceleration])
    mask, num_low_freqs = mask_func((1, 1, w, 1), seed=0)
    mask = mask.view(1, 1, 1, w, 1).expand(args.batch_size, 1, 1, w, 1).contiguous()
    masked_kspace = kspace * mask + 0.0
    return masked_kspace.to(device), mask.bool().to(device), num_low_freqs


def build_model(args, device):
    model = VarNet(num_cascades=args.num_cascades,
                   sens_chans=args.sens_chans,
                   sens_pools=args.sens_pools,
                   chans=args.chans,
                   pools=args.pools)
    if args.checkpoint:
        state = torch.load(args.checkpoint, map_location="cpu")
        state = state.get("state_dict", state)
        state = {k.replace("varnet.", "", 1): v for k, v in state.items()}
        model.load_state_dict(state)
    return model.eval().to(device)


class NvtxCascades:
    """Wrap each cascade's forward in an NVTX range for Nsight Systems."""

    def __init__(self, model):
        self.handles = []
        for i, cascade in enumerate(model.cascades):
            self.handles.append(cascade.register_forward_pre_hook(self._push(i)))
            self.handles.append(cascade.register_forward_hook(self._pop))

    @staticmethod
    def _push(i):
        def hook(module, inputs):
            torch.cuda.nvtx.range_push(f"cascade_{i}")
        return hook

    @staticmethod
    def _pop(module, inputs, output):
        torch.cuda.nvtx.range_pop()

    def remove(self):
        for h in self.handles:
            h.remove()


@torch.no_grad()
def time_forward(model, masked_kspace, mask, num_low_freqs, args):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(args.warmup + args.iters):
        start.record()
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            out = model(masked_kspace, mask, num_low_freqs)
        end.record()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(start.elapsed_time(end))
    return out, times


def run_profile(model, masked_kspace, mask, num_low_freqs, args):
    os.makedirs(args.trace_dir, exist_ok=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True,
                 profile_memory=True,
                 with_stack=False) as prof:
        with record_function("varnet_forward"):
            with torch.no_grad():
                model(masked_kspace, mask, num_low_freqs)
    trace = os.path.join(args.trace_dir, f"varnet_c{args.num_cascades}.json")
    prof.export_chrome_trace(trace)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
    print(f"trace written to {trace}")


def main():
    args = parse_args()
    device = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = True
    if args.tf32:
        if torch.cuda.get_device_capability(device)[0] < 8:
            print("warning: TF32 needs Ampere (sm_80) or newer; --tf32 has no effect on this GPU")
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    model = build_model(args, device)
    if args.compile:
        # max-autotune benchmarks Triton GEMM/conv templates; first call takes a few minutes
        model = torch.compile(model, mode="max-autotune")
    masked_kspace, mask, num_low_freqs = make_inputs(args, device)

    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    nvtx = NvtxCascades(model)
    out, times = time_forward(model, masked_kspace, mask, num_low_freqs, args)
    nvtx.remove()
    peak_mb = torch.cuda.max_memory_allocated() / 2 ** 20

    result = {
        "device": torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "num_cascades": args.num_cascades,
        "shape": [args.batch_size, args.coils] + list(args.shape),
        "amp": args.amp,
        "tf32": args.tf32,
        "latency_ms_median": statistics.median(times),
        "latency_ms_p90": sorted(times)[int(0.9 * len(times)) - 1],
        "peak_mem_mb": peak_mb,
        "output_shape": list(out.shape),
    }
    print(json.dumps(result, indent=2))
    if args.out_json:
        with open(args.out_json, "w") as f:
            json.dump(result, f, indent=2)

    if args.profile:
        run_profile(model, masked_kspace, mask, num_low_freqs, args)


if __name__ == "__main__":
    main()
