"""Profile a few training steps of a model: kernel timeline, memory snapshot and NVTX ranges.

    python tools/profile_train_step.py --model resnet50 --steps 8 --out prof/
"""
import argparse
import contextlib
import os
import time

import torch
import torch.nn as nn
import torchvision
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--out", default="prof")
    p.add_argument("--amp", action="store_true")
    p.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for nsys")
    p.add_argument("--memory-snapshot", action="store_true")
    return p.parse_args()


@contextlib.contextmanager
def nvtx_range(name, enabled):
    if enabled:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if enabled:
            torch.cuda.nvtx.range_pop()


def cuda_timer():
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    return start, end


def train_step(model, images, target, criterion, optimizer, scaler, use_amp, nvtx):
    with nvtx_range("forward", nvtx), record_function("forward"):
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
            output = model(images)
            loss = criterion(output, target)
    with nvtx_range("backward", nvtx), record_function("backward"):
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
    with nvtx_range("optimizer", nvtx), record_function("optimizer"):
        scaler.step(optimizer)
        scaler.update()
    return loss


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = True

    model = getattr(torchvision.models, args.model)().to(device, memory_format=torch.channels_last)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    images = torch.randn(args.batch_size, 3, 224, 224, device=device).to(memory_format=torch.channels_last)
    target = torch.randint(0, 1000, (args.batch_size,), device=device)

    # warm-up (cudnn autotuning, allocator growth)
    for _ in range(3):
        train_step(model, images, target, criterion, optimizer, scaler, args.amp, nvtx=False)
    torch.cuda.synchronize()

    if args.memory_snapshot:
        torch.cuda.memory._record_memory_history(max_entries=100000)

    prof_schedule = schedule(wait=1, warmup=1, active=args.steps - 2, repeat=1)
    if args.nvtx:
        torch.cuda.cudart().cudaProfilerStart()
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=prof_schedule,
        on_trace_ready=tensorboard_trace_handler(args.out),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
    ) as prof, torch.autograd.profiler.emit_nvtx(enabled=args.nvtx):
        for step in range(args.steps):
            start, end = cuda_timer()
            start.record()
            train_step(model, images, target, criterion, optimizer, scaler, args.amp, args.nvtx)
            end.record()
            prof.step()
            torch.cuda.synchronize()
            print(f"step {step}: {start.elapsed_time(end):.2f} ms")
    if args.nvtx:
        torch.cuda.cudart().cudaProfilerStop()

    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20))
    prof.export_chrome_trace(os.path.join(args.out, "trace.json"))

    if args.memory_snapshot:
        torch.cuda.memory._dump_snapshot(os.path.join(args.out, "memory_snapshot.pickle"))
        torch.cuda.memory._record_memory_history(enabled=None)

    print(f"peak allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB, "
          f"reserved {torch.cuda.max_memory_reserved() / 2**30:.2f} GiB")
    print(torch.cuda.memory_summary(abbreviated=True))


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"done in {time.time() - t0:.1f}s")
