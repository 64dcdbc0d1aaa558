"""Measure inference runtime / MACs / peak memory of a restoration network.

The numbers in our model-zoo table were produced with this script on a single
A100 (batch 1, 256x256, averaged over 100 runs after 10 warm-up runs).

Example:
    python scripts/benchmark_runtime.py -opt options/test/GoPro/NAFNet-width64.yml --size 256 --iters 100
    python scripts/benchmark_runtime.py -opt options/test/SIDD/NAFNet-width32.yml --fp16 --channels_last
"""
import argparse
import time
import torch
import numpy as np
from copy import deepcopy

from basicsr.models.archs import define_network
from basicsr.utils.options import parse


def get_args():
    parser = argparse.ArgumentParser(description='Runtime benchmark')
    parser.add_argument('-opt', type=str, required=True, help='Path to option YAML file.')
    parser.add_argument('--size', type=int, default=256, help='square input size')
    parser.add_argument('--batch', type=int, default=1)
    parser.add_argument('--iters', type=int, default=100)
    parser.add_argument('--warmup', type=int, default=10)
    parser.add_argument('--fp16', action='store_true', help='run the network in half precision')
    parser.add_argument('--channels_last', action='store_true', help='NHWC memory format (faster convs on Ampere)')
    parser.add_argument('--gpu', type=int, default=0, help='GPU index to benchmark on')
    return parser.parse_args()


def count_macs(net, size):
    try:
        from ptflops import get_model_complexity_info
    except ImportError:
        return None, None
    macs, params = get_model_complexity_info(net, (3, size, size), as_strings=False,
                                             print_per_layer_stat=False, verbose=False)
    return macs / 1e9, params / 1e6


@torch.no_grad()
def benchmark(net, x, iters, warmup):
    for _ in range(warmup):
        net(x)
    torch.cuda.synchronize()  # finish warm-up kernels

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros(iters)
    for i in range(iters):
        starter.record()
        net(x)
        ender.record()
        torch.cuda.synchronize()
        timings[i] = starter.elapsed_time(ender)  # milliseconds
    return timings


@torch.no_grad()
def benchmark_wallclock(net, x, iters):
    """Host-side timing, kept for comparison with numbers reported by other papers."""
    t0 = time.perf_counter()
    for _ in range(iters):
        out = net(x)
    out.cpu()
    return (time.perf_counter() - t0) / iters * 1000.0


def main():
    args = get_args()
    opt = parse(args.opt, is_train=False)

    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda', args.gpu)

    net = define_network(deepcopy(opt['network_g']))
    gmacs, mparams = count_macs(deepcopy(net), args.size)  # counted on CPU
    net = net.to(device).eval()
    if args.fp16:
        net = net.half()
    if args.channels_last:
        net = net.to(memory_format=torch.channels_last)

    dtype = torch.float16 if args.fp16 else torch.float32
    x = torch.randn(args.batch, 3, args.size, args.size, device=device, dtype=dtype)
    if args.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)

    torch.cuda.reset_peak_memory_stats(device)
    timings = benchmark(net, x, args.iters, args.warmup)
    peak_mem = torch.cuda.max_memory_allocated(device) / 1024 ** 2
    wall_ms = benchmark_wallclock(net, x, min(args.iters, 20))

    print(f'Network: {opt["network_g"]["type"]}  input: {args.batch}x3x{args.size}x{args.size}  '
          f'{"fp16" if args.fp16 else "fp32"}  device: {torch.cuda.get_device_name(args.gpu)}')
    if gmacs is not None:
        print(f'MACs: {gmacs:.2f} G   Params: {mparams:.2f} M')
    print(f'Runtime: {timings.mean():.2f} ms (+- {timings.std():.2f})   FPS: {1000.0 / timings.mean():.1f}')
    print(f'Wall-clock: {wall_ms:.2f} ms')
    print(f'Peak memory: {peak_mem:.1f} MB')


if __name__ == '__main__':
    main()
