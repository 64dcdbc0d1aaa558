"""
Benchmark the inference latency of the reconstruction networks (E2VID, E2VID+, FireNet, FireNet+).

Example:
    python scripts/benchmark_latency.py --model firenet --height 180 --width 240 --iters 500
    python scripts/benchmark_latency.py --model e2vid --half --cudnn_benchmark

The numbers reported in the FireNet paper were obtained on a GTX 1080 Ti; on Ampere cards
use --half to get the tensor-core path.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import torch

sys.path.append(os.path.join(os.path.dirname(__file__), '..'))
from model.model import E2VIDRecurrent, FireNet  # noqa: E402
from utils.inference_utils import CropParameters  # noqa: E402

MODEL_CONFIGS = {
    'e2vid': dict(num_bins=5, skip_type='sum', recurrent_block_type='convlstm', num_encoders=3,
                  base_num_channels=32, num_residual_blocks=2, use_upsample_conv=False, norm='BN'),
    'firenet': dict(num_bins=5, base_num_channels=16, kernel_size=3, recurrent_block_type='convgru'),
}


def gpu_utilization(device_index=0):
    """Best-effort GPU utilization read through NVML (None if NVML is unavailable)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        util = pynvml.nvmlDeviceGetUtilizationRates(handle)
        power_mw = pynvml.nvmlDeviceGetPowerUsage(handle)
        pynvml.nvmlShutdown()
        return {'gpu_util_percent': util.gpu, 'power_w': power_mw / 1000.0}
    except Exception:
        return None


def build_model(name):
    cfg = MODEL_CONFIGS[name]
    if name == 'e2vid':
        return E2VIDRecurrent(cfg)
    return FireNet(cfg)


def pick_dtype(device, want_half):
    if not want_half or device.type != 'cuda':
        return torch.float32
    major, minor = torch.cuda.get_device_capability(device)
    if major >= 7:
        # Volta and newer have tensor cores; fp16 is a clear win
        return torch.float16
    print('fp16 requested but compute capability {}.{} has no tensor cores; staying in fp32'.format(major, minor))
    return torch.float32


def main():
    parser = argparse.ArgumentParser(description='Latency benchmark for event-based reconstruction networks')
    parser.add_argument('--model', choices=sorted(MODEL_CONFIGS), default='firenet')
    parser.add_argument('--height', type=int, default=180)
    parser.add_argument('--width', type=int, default=240)
    parser.add_argument('--batch_size', type=int, default=1)
    parser.add_argument('--iters', type=int, default=300)
    parser.add_argument('--warmup', type=int, default=30)
    parser.add_argument('--device', type=str, default='cuda')
    parser.add_argument('--half', action='store_true')
    parser.add_argument('--cudnn_benchmark', action='store_true')
    parser.add_argument('--channels_last', action='store_true')
    parser.add_argument('--compile', action='store_true', help='wrap the model with torch.compile')
    parser.add_argument('--output_json', type=str, default=None)
    args = parser.parse_args()

    device = torch.device(args.device)
    is_gpu = device.type == 'cuda'
    torch.backends.cudnn.benchmark = args.cudnn_benchmark

    model = build_model(args.model).eval().to(device)
    dtype = pick_dtype(device, args.half)
    model = model.to(dtype)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model, mode='reduce-overhead')

    num_encoders = getattr(model, 'num_encoders', 0)
    crop = CropParameters(args.width, args.height, num_encoders)
    x = torch.randn(args.batch_size, MODEL_CONFIGS[args.model]['num_bins'],
                    crop.height_crop_size, crop.width_crop_size, device=device, dtype=dtype)
    if args.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)

    if is_gpu:
        print('GPU: {}'.format(torch.cuda.get_device_name(device)))
        torch.cuda.reset_peak_memory_stats(device)

    timings_ms = []
    states = None
    with torch.no_grad():
        for _ in range(args.warmup):
            _, states = model(x, states)
        if is_gpu:
            torch.cuda.synchronize(device)

        starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for it in range(args.iters):
            if is_gpu:
                starter.record()
                _, states = model(x, states)
                ender.record()
                torch.cuda.synchronize()
                timings_ms.append(starter.elapsed_time(ender))
            else:
                t0 = time.perf_counter()
                _, states = model(x, states)
                timings_ms.append((time.perf_counter() - t0) * 1000.0)

    result = {
        'model': args.model,
        'device': str(device),
        'dtype': str(dtype),
        'input': [args.batch_size, crop.height_crop_size, crop.width_crop_size],
        'mean_ms': statistics.mean(timings_ms),
        'median_ms': statistics.median(timings_ms),
        'p90_ms': sorted(timings_ms)[int(0.9 * len(timings_ms)) - 1],
        'fps': 1000.0 / statistics.mean(timings_ms),
        'torch': torch.__version__,
        'python': platform.python_version(),
    }
    if is_gpu:
        result['peak_mem_mb'] = torch.cuda.max_memory_allocated(device) / 2 ** 20
        result['cuda'] = torch.version.cuda
        result['cudnn'] = torch.backends.cudnn.version()
        nvml = gpu_utilization(device.index or 0)
        if nvml is not None:
            result.update(nvml)

    print(json.dumps(result, indent=2))
    if args.output_json:
        with open(args.output_json, 'w') as f:
            json.dump(result, f, indent=2)


if __name__ == '__main__':
    main()
