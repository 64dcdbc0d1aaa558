"""Inference throughput / latency benchmark for torchvision classification models.

    python tools/benchmark.py --model resnet50 --batch-size 256 --fp16 --channels-last
    python tools/benchmark.py --model efficientnet_b0 --cuda-graph --output results/effb0.json

Numbers in MODEL_ZOO.md were produced on a single A100-SXM4-80GB with this script.
"""
import argparse
import json
import os
import time

import torch
import torchvision

try:
    import pynvml
except ImportError:  # nvidia-ml-py3 is optional
    pynvml = None


def parse_args():
    parser = argparse.ArgumentParser(description="vision_zoo inference benchmark")
    parser.add_argument("--model", default="resnet50", help="torchvision model name")
    parser.add_argument("--batch-size", default=128, type=int)
    parser.add_argument("--image-size", default=224, type=int)
    parser.add_argument("--warmup", default=20, type=int, help="untimed iterations")
    parser.add_argument("--iters", default=100, type=int, help="timed iterations")
    parser.add_argument("--fp16", action="store_true", help="run the model in half precision")
    parser.add_argument("--bf16", action="store_true", help="run the model in bfloat16 (Ampere+)")
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--jit", action="store_true", help="torch.jit.trace the model first")
    parser.add_argument("--cuda-graph", action="store_true", help="capture the forward in a CUDA graph")
    parser.add_argument("--device", default="cuda:0", help="device to benchmark on")
    parser.add_argument("--output", default="", help="write the result as json")
    return parser.parse_args()


def gpu_info(index):
    """Driver-level memory / utilisation numbers (what nvidia-smi would show)."""
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    info = {
        "driver": pynvml.nvmlSystemGetDriverVersion().decode() if isinstance(pynvml.nvmlSystemGetDriverVersion(), bytes) else pynvml.nvmlSystemGetDriverVersion(),
        "mem_used_mb": mem.used / 2**20,
        "mem_total_mb": mem.total / 2**20,
        "gpu_util": util.gpu,
    }
    pynvml.nvmlShutdown()
    return info


def build_model(args, device, dtype):
    model = torchvision.models.get_model(args.model, weights=None)
    model = model.eval().to(device=device, dtype=dtype)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    return model


@torch.inference_mode()
def run(args):
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True

    if args.bf16 and torch.cuda.get_device_capability(device)[0] < 8:
        raise SystemExit("--bf16 needs compute capability >= 8.0")
    dtype = torch.bfloat16 if args.bf16 else torch.float16 if args.fp16 else torch.float32

    model = build_model(args, device, dtype)
    x = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=device, dtype=dtype)
    if args.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    if args.jit:
        model = torch.jit.trace(model, x)
        model = torch.jit.freeze(model)

    graph = None
    if args.cuda_graph:
        static_x = x.clone()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)  # noqa: F841

    def step():
        if graph is not None:
            graph.replay()
        else:
            model(x)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize(device)

    torch.cuda.reset_peak_memory_stats(device)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    wall = time.perf_counter()
    start.record()
    for _ in range(args.iters):
        step()
    end.record()
    torch.cuda.synchronize()
    wall = time.perf_counter() - wall

    latency_ms = start.elapsed_time(end) / args.iters
    result = {
        "model": args.model,
        "batch_size": args.batch_size,
        "dtype": str(dtype).replace("torch.", ""),
        "channels_last": args.channels_last,
        "cuda_graph": args.cuda_graph,
        "latency_ms": round(latency_ms, 3),
        "throughput_img_s": round(args.batch_size * 1000.0 / latency_ms, 1),
        "wall_s": round(wall, 3),
        "device_name": torch.cuda.get_device_name(device),
        "max_mem_mb": round(torch.cuda.max_memory_allocated(device) / 2**20, 1),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
    }
    if pynvml is not None:
        result.update(gpu_info(device.index or 0))
    return result


def main():
    args = parse_args()
    result = run(args)
    print(json.dumps(result, indent=2))
    if args.output:
        os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
        with open(args.output, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
