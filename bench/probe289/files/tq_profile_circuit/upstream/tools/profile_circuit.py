#!/usr/bin/env python
"""Profile one training step of a QNN with torch.profiler + NVTX ranges.

Produces a Chrome/TensorBoard trace under ``--logdir`` and prints the top
CUDA kernels.  NVTX ranges mark encoder / variational layers / measurement
so the same run can also be inspected with Nsight Systems:

    nsys profile -t cuda,nvtx -o qnn_step python tools/profile_circuit.py --nvtx-only
    python tools/profile_circuit.py --n-wires 16 --bsz 256 --logdir prof/
"""

import argparse
import os
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler

import torchquantum as tq


class QNN(tq.QuantumModule):
    def __init__(self, n_wires, n_layers, n_classes):
        super().__init__()
        self.n_wires = n_wires
        self.encoder = tq.GeneralEncoder(
            [{"input_idx": [i % 16], "func": "rx" if (i // 16) % 2 == 0 else "ry", "wires": [i % n_wires]}
             for i in range(max(16, n_wires))]
        )
        self.layers = tq.QuantumModuleList(
            [tq.RandomLayer(n_ops=4 * n_wires, wires=list(range(n_wires)), seed=k) for k in range(n_layers)]
        )
        self.measure = tq.MeasureAll(tq.PauliZ)
        self.head = torch.nn.Linear(n_wires, n_classes)

    def forward(self, x):
        qdev = tq.QuantumDevice(n_wires=self.n_wires, bsz=x.shape[0], device=x.device)
        with nvtx_range("encoder"):
            self.encoder(qdev, x)
        for k, layer in enumerate(self.layers):
            with nvtx_range(f"layer{k}"):
                layer(qdev)
        with nvtx_range("measure"):
            out = self.measure(qdev)
        return F.log_softmax(self.head(out), dim=-1)


_USE_NVTX = True


@contextmanager
def nvtx_range(name):
    if _USE_NVTX:
        torch.cuda.nvtx.range_push(name)
    try:
        with record_function(name):
            yield
    finally:
        if _USE_NVTX:
            torch.cuda.nvtx.range_pop()


def step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    with nvtx_range("forward"):
        out = model(x)
        loss = F.nll_loss(out, y)
    with nvtx_range("backward"):
        loss.backward()
    with nvtx_range("optimizer"):
        opt.step()
    return loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-wires", type=int, default=12)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--bsz", type=int, default=128)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--logdir", default="prof")
    ap.add_argument("--nvtx-only", action="store_true", help="no torch.profiler, just NVTX for nsys")
    ap.add_argument("--record-shapes", action="store_true")
    ap.add_argument("--memory", action="store_true", help="profile memory too")
    args = ap.parse_args()

    assert torch.cuda.is_available(), "this profiler script expects a GPU"
    device = torch.device("cuda")
    torch.manual_seed(0)

    model = QNN(args.n_wires, args.layers, 10).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.rand(args.bsz, 16, device=device) * 3.14
    y = torch.randint(0, 10, (args.bsz,), device=device)

    # warm-up (cuBLAS handles, caching allocator)
    for _ in range(2):
        step(model, opt, x, y)
    torch.cuda.synchronize()

    if args.nvtx_only:
        torch.cuda.cudart().cudaProfilerStart()
        for _ in range(args.steps):
            step(model, opt, x, y)
        torch.cuda.synchronize(device)
        torch.cuda.cudart().cudaProfilerStop()
        return

    os.makedirs(args.logdir, exist_ok=True)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=args.steps - 2, repeat=1),
        on_trace_ready=tensorboard_trace_handler(args.logdir),
        record_shapes=args.record_shapes,
        profile_memory=args.memory,
        with_stack=False,
    ) as prof:
        for _ in range(args.steps):
            step(model, opt, x, y)
            prof.step()

    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))
    print(f"trace written to {args.logdir}/")


if __name__ == "__main__":
    main()
