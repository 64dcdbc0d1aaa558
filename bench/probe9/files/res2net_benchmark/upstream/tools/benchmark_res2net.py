"""Throughput / latency benchmark for Res2Net backbones.

Example:
    python tools/benchmark_res2net.py --arch res2net50_26w_4s --batch-sizes 1 32 128 --fp16

Reports images/s, p50/p99 latency measured with CUDA events, and peak memory.
"""
import argparse
import json
import math
import platform
import subprocess

import numpy as np
import torch
import torch.nn as nn


class Bottle2neck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, baseWidth=26, scale=4, stype='normal'):
        super(Bottle2neck, self).__init__()
        width = int(math.floor(planes * (baseWidth / 64.0)))
        self.conv1 = nn.Conv2d(inplanes, width * scale, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width * scale)
        self.nums = 1 if scale == 1 else scale - 1
        if stype == 'stage':
            self.pool = nn.AvgPool2d(kernel_size=3, stride=stride, padding=1)
        convs, bns = [], []
        for i in range(self.nums):
            convs.append(nn.Conv2d(width, width, kernel_size=3, stride=stride, padding=1, bias=False))
            bns.append(nn.BatchNorm2d(width))
        self.convs = nn.ModuleList(convs)
        self.bns = nn.ModuleList(bns)
        self.conv3 = nn.Conv2d(width * scale, planes * self.expansion, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stype = stype
        self.scale = scale
        self.width = width

    def forward(self, x):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        spx = torch.split(out, self.width, 1)
        for i in range(self.nums):
            if i == 0 or self.stype == 'stage':
                sp = spx[i]
            else:
                sp = sp + spx[i]
            sp = self.relu(self.bns[i](self.convs[i](sp)))
            out = sp if i == 0 else torch.cat((out, sp), 1)
        if self.scale != 1 and self.stype == 'normal':
            out = torch.cat((out, spx[self.nums]), 1)
        elif self.scale != 1 and self.stype == 'stage':
            out = torch.cat((out, self.pool(spx[self.nums])), 1)
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            residual = self.downsample(x)
        return self.relu(out + residual)


class Res2Net(nn.Module):
    def __init__(self, block, layers, baseWidth=26, scale=4, num_classes=1000):
        self.inplanes = 64
        super(Res2Net, self).__init__()
        self.baseWidth = baseWidth
        self.scale = scale
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample=downsample, stype='stage',
                        baseWidth=self.baseWidth, scale=self.scale)]
        self.inplanes = planes * block.expansion
        for i in range(1, blocks):
            layers.append(block(self.inplanes, planes, baseWidth=self.baseWidth, scale=self.scale))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x)
        return self.fc(x.view(x.size(0), -1))


ARCHS = {
    'res2net50_26w_4s': dict(layers=[3, 4, 6, 3], baseWidth=26, scale=4),
    'res2net50_48w_2s': dict(layers=[3, 4, 6, 3], baseWidth=48, scale=2),
    'res2net101_26w_4s': dict(layers=[3, 4, 23, 3], baseWidth=26, scale=4),
}


def gpu_info():
    """Name, memory and driver of every visible GPU, straight from nvidia-smi."""
    out = subprocess.check_output(
        ['nvidia-smi', '--query-gpu=index,name,memory.total,driver_version', '--format=csv,noheader,nounits'],
        universal_newlines=True)
    gpus = []
    for line in out.strip().splitlines():
        idx, name, mem, driver = [s.strip() for s in line.split(',')]
        gpus.append({'index': int(idx), 'name': name, 'memory_mb': int(mem), 'driver': driver})
    return gpus


def percentile(values, q):
    return float(np.percentile(np.asarray(values), q))


@torch.no_grad()
def bench_one(model, batch_size, args, device):
    x = torch.randn(batch_size, 3, args.image_size, args.image_size, device=device)
    if args.fp16:
        x = x.half()
    for _ in range(args.warmup):
        model(x)
    torch.cuda.synchronize()

    torch.cuda.reset_peak_memory_stats()
    latencies = []
    for _ in range(args.iters):
        starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        starter.record()
        torch.cuda.nvtx.range_push("res2net_forward")
        model(x)
        torch.cuda.nvtx.range_pop()
        ender.record()
        torch.cuda.synchronize()  # wait for ender
        latencies.append(starter.elapsed_time(ender))
    peak_mb = torch.cuda.max_memory_allocated() / 2 ** 20
    mean_ms = sum(latencies) / len(latencies)
    return {
        'batch_size': batch_size,
        'images_per_s': batch_size * 1000.0 / mean_ms,
        'p50_ms': percentile(latencies, 50),
        'p99_ms': percentile(latencies, 99),
        'peak_mem_mb': peak_mb,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--arch', default='res2net50_26w_4s', choices=sorted(ARCHS))
    parser.add_argument('--batch-sizes', type=int, nargs='+', default=[1, 32, 128])
    parser.add_argument('--image-size', type=int, default=224)
    parser.add_argument('--warmup', type=int, default=20)
    parser.add_argument('--iters', type=int, default=100)
    parser.add_argument('--fp16', action='store_true')
    parser.add_argument('--jit', action='store_true', help='benchmark a traced module')
    parser.add_argument('--gpu', type=int, default=0)
    parser.add_argument('--cpu', action='store_true', help='sanity run on CPU (no events, no memory stats)')
    parser.add_argument('--out', default='')
    args = parser.parse_args()

    if args.cpu:
        print('CPU mode is only a smoke test; numbers are not comparable.')
        model = Res2Net(Bottle2neck, **ARCHS[args.arch]).eval()
        with torch.no_grad():
            model(torch.randn(2, 3, args.image_size, args.image_size))
        return

    torch.cuda.set_device(args.gpu)
    torch.backends.cudnn.benchmark = True
    device = torch.device('cuda', args.gpu)

    model = Res2Net(Bottle2neck, **ARCHS[args.arch]).cuda().eval()
    if args.fp16:
        model = model.half()
    if args.jit:
        example = torch.randn(1, 3, args.image_size, args.image_size, device=device)
        model = torch.jit.trace(model, example.half() if args.fp16 else example)

    report = {
        'arch': args.arch,
        'torch': torch.__version__,
        'host': platform.node(),
        'device_name': torch.cuda.get_device_name(args.gpu),
        'gpus': gpu_info(),
        'fp16': args.fp16,
        'results': [],
    }
    for bs in args.batch_sizes:
        r = bench_one(model, bs, args, device)
        print('{arch} bs={batch_size:4d}  {images_per_s:9.1f} img/s  p50 {p50_ms:7.2f} ms  '
              'p99 {p99_ms:7.2f} ms  peak {peak_mem_mb:8.1f} MB'.format(arch=args.arch, **r))
        report['results'].append(r)
        torch.cuda.empty_cache()

    if args.out:
        with open(args.out, 'w') as f:
            json.dump(report, f, indent=2)


if __name__ == '__main__':
    main()
