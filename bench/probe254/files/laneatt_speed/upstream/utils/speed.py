"""Measure FPS, MACs and parameter count of a lane detector.

    python utils/speed.py --cfg cfgs/laneatt_culane_resnet34.yml --iters 300

Numbers reported in the paper were obtained on a single RTX 2080 Ti with batch size 1.
"""
import time
import argparse
import warnings

import torch
from thop import profile, clever_format

from lib.config import Config


def parse_args():
    parser = argparse.ArgumentParser(description="Tool to measure a model's speed")
    parser.add_argument("--cfg", default="config.yaml", help="Config file")
    parser.add_argument("--model_path", help="Model checkpoint path (optional)")
    parser.add_argument('--iters', default=100, type=int, help="Number of times to run the model and get the average")
    parser.add_argument('--warmup', default=20, type=int, help="Iterations discarded before timing")
    parser.add_argument('--half', action='store_true', help="Benchmark in fp16 (needs tensor cores to be meaningful)")
    parser.add_argument('--gpu', default=0, type=int, help="Index of the GPU to benchmark on")

    return parser.parse_args()


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def benchmark(model, x, iters, warmup, test_parameters):
    with torch.no_grad():
        for _ in range(warmup):
            model(x, **test_parameters)
        torch.cuda.synchronize()  # drain the warmup work before starting the clock
        t_start = time.time()
        for _ in range(iters):
            model(x, **test_parameters)
        torch.cuda.synchronize()  # wait for the timed iterations
        t_end = time.time()
    return (t_end - t_start) / iters


def benchmark_with_events(model, x, iters, test_parameters):
    """Per-iteration latency measured on the device stream instead of the host clock."""
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = []
    with torch.no_grad():
        for _ in range(iters):
            starter.record()
            model(x, **test_parameters)
            ender.record()
            torch.cuda.synchronize()  # elapsed_time needs both events completed
            timings.append(starter.elapsed_time(ender))
    timings.sort()
    return timings[len(timings) // 2] / 1000.0


def main():
    args = parse_args()
    cfg = Config(args.cfg)
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda:{}'.format(args.gpu))
    model = cfg.get_model()
    if args.model_path is not None:
        model.load_state_dict(torch.load(args.model_path, map_location='cpu')['model'])
    model = model.to(device)
    model.eval()

    if args.half:
        major, _ = torch.cuda.get_device_capability(args.gpu)
        if major < 7:
            warnings.warn("fp16 benchmark on a GPU without tensor cores; numbers will not be representative")
        model = model.half()

    test_parameters = cfg.get_test_parameters()
    x = torch.zeros((1, 3, cfg['model']['parameters']['img_h'], cfg['model']['parameters']['img_w'])).to(device) + 1
    if args.half:
        x = x.half()

    # Benchmark MACs and params
    macs, params = profile(model, inputs=(x, ), verbose=False)
    macs, params = clever_format([macs, params], "%.3f")
    print('MACs: {}'.format(macs))
    print('Params: {} ({} trainable)'.format(params, count_parameters(model)))

    # GPU warmup + timing
    avg = benchmark(model, x, args.iters, args.warmup, test_parameters)
    median = benchmark_with_events(model, x, args.iters, test_parameters)
    print('Device: {}'.format(torch.cuda.get_device_name(args.gpu)))
    print('Average FPS: {:.2f} (host clock), {:.2f} (median, device events)'.format(1.0 / avg, 1.0 / median))


if __name__ == '__main__':
    main()
