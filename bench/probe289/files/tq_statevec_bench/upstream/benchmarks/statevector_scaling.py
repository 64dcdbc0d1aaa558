#!/usr/bin/env python
"""Scaling benchmark for batched state-vector simulation.

Measures forward and forward+backward wall-clock time of a hardware-efficient
ansatz for a range of qubit counts and batch sizes, on CPU and on the GPU,
and writes one JSON record per configuration.  The numbers in the paper's
"GPU speed-up" table were produced with

    python benchmarks/statevector_scaling.py --wires 4 20 --bsz 1 32 512 \
        --devices cpu cuda --repeat 20 --out results/scaling_a100.json

Timings on the GPU use CUDA events so that kernel launch latency is
included but host-side Python overhead between launches is not double
counted.
"""

import argparse
import json
import os
import platform
import statistics
import time
from datetime import datetime

import torch
import torchquantum as tq


class HEA(tq.QuantumModule):
    """Hardware-efficient ansatz: RY-RZ on every wire + ring of CNOTs."""

    def __init__(self, n_wires, n_layers):
        super().__init__()
        self.n_wires = n_wires
        self.n_layers = n_layers
        self.ry = tq.QuantumModuleList()
        self.rz = tq.QuantumModuleList()
        for _ in range(n_layers):
            self.ry.append(tq.Op1QAllLayer(op=tq.RY, n_wires=n_wires, has_params=True, trainable=True))
            self.rz.append(tq.Op1QAllLayer(op=tq.RZ, n_wires=n_wires, has_params=True, trainable=True))
        self.cnot = tq.Op2QAllLayer(op=tq.CNOT, n_wires=n_wires, circular=True)
        self.encoder = tq.GeneralEncoder(
            [{"input_idx": [i], "func": "ry", "wires": [i]} for i in range(n_wires)]
        )
        self.measure = tq.MeasureAll(tq.PauliZ)

    def forward(self, x):
        qdev = tq.QuantumDevice(n_wires=self.n_wires, bsz=x.shape[0], device=x.device)
        self.encoder(qdev, x)
        for k in range(self.n_layers):
            self.ry[k](qdev)
            self.rz[k](qdev)
            self.cnot(qdev)
        return self.measure(qdev)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_cpu(fn, repeat, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def time_cuda(fn, repeat, warmup, device):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def run_one(n_wires, bsz, n_layers, device, repeat, warmup, backward):
    model = HEA(n_wires, n_layers).to(device)
    x = torch.rand(bsz, n_wires, device=device) * 3.1415

    def fwd():
        with torch.no_grad():
            model(x)

    def fwd_bwd():
        model.zero_grad(set_to_none=True)
        out = model(x)
        out.sum().backward()

    fn = fwd_bwd if backward else fwd

    if device.type == "cuda" and torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        times = time_cuda(fn, repeat, warmup, device)
        peak_mem = torch.cuda.max_memory_allocated(device) / 2**20
    else:
        times = time_cpu(fn, repeat, warmup)
        peak_mem = None

    return {
        "n_wires": n_wires,
        "bsz": bsz,
        "n_layers": n_layers,
        "device": str(device),
        "backward": backward,
        "mean_ms": statistics.mean(times),
        "median_ms": statistics.median(times),
        "stdev_ms": statistics.stdev(times) if len(times) > 1 else 0.0,
        "peak_mem_mib": peak_mem,
    }


def environment_info():
    info = {
        "timestamp": datetime.now().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torchquantum": getattr(tq, "__version__", "unknown"),
        "host": platform.node(),
        "cpu": platform.processor(),
        "num_threads": torch.get_num_threads(),
    }
    if torch.cuda.is_available():
        info["cuda"] = torch.version.cuda
        info["cudnn"] = torch.backends.cudnn.version()
        info["gpu"] = torch.cuda.get_device_name(0)
        info["gpu_count"] = torch.cuda.device_count()
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wires", type=int, nargs=2, default=[4, 16], metavar=("MIN", "MAX"))
    parser.add_argument("--wire-step", type=int, default=2)
    parser.add_argument("--bsz", type=int, nargs="+", default=[1, 32, 256])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--devices", nargs="+", default=["cpu", "cuda"])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--backward", action="store_true")
    parser.add_argument("--max-cpu-wires", type=int, default=14,
                        help="skip CPU runs above this size, they take forever")
    parser.add_argument("--out", type=str, default="results/scaling.json")
    args = parser.parse_args()

    torch.manual_seed(0)
    records = []
    env = environment_info()
    print(json.dumps(env, indent=2))

    devices = []
    for d in args.devices:
        if d.startswith("cuda") and not torch.cuda.is_available():
            print(f"skipping {d}: CUDA not available")
            continue
        devices.append(torch.device(d))

    for device in devices:
        for n_wires in range(args.wires[0], args.wires[1] + 1, args.wire_step):
            if device.type == "cpu" and n_wires > args.max_cpu_wires:
                continue
            for bsz in args.bsz:
                try:
                    rec = run_one(n_wires, bsz, args.layers, device,
                                  args.repeat, args.warmup, args.backward)
                except RuntimeError as err:
                    if "out of memory" in str(err):
                        print(f"OOM at n_wires={n_wires} bsz={bsz} on {device}")
                        torch.cuda.empty_cache()  # drop cached blocks before the next size
                        continue
                    raise
                records.append(rec)
                mem = f"{rec['peak_mem_mib']:.0f} MiB" if rec["peak_mem_mib"] is not None else "-"
                print(f"{str(device):8s} wires={n_wires:2d} bsz={bsz:5d} "
                      f"{rec['median_ms']:9.3f} ms  {mem}")
                sync(device)

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"env": env, "records": records}, f, indent=1)
    print(f"wrote {len(records)} records to {args.out}")


if __name__ == "__main__":
    main()
