import os
import sys
sys.path.append('.')
import time
import argparse
import torch
from utils import count_params

parser = argparse.ArgumentParser(description='Runtime / parameter benchmark for the IFRNet family')
parser.add_argument('--height', type=int, default=480)
parser.add_argument('--width', type=int, default=640)
parser.add_argument('--warmup', type=int, default=100)
parser.add_argument('--iters', type=int, default=1000)
parser.add_argument('--half', action='store_true', help='benchmark in fp16 (needs a GPU with fast fp16)')
args = parser.parse_args()

dtype = torch.float16 if args.half else torch.float32

img0 = torch.randn(1, 3, args.height, args.width).cuda().to(dtype)
img1 = torch.randn(1, 3, args.height, args.width).cuda().to(dtype)
embt = torch.tensor(1 / 2).float().view(1, 1, 1, 1).cuda().to(dtype)

print('Device: {}'.format(torch.cuda.get_device_name(0)))

with torch.no_grad():
    for model_name in ['IFRNet', 'IFRNet_L', 'IFRNet_S']:
        if model_name == 'IFRNet':
            from models.IFRNet import Model
        elif model_name == 'IFRNet_L':
            from models.IFRNet_L import Model
        elif model_name == 'IFRNet_S':
            from models.IFRNet_S import Model

        model = Model().cuda().eval().to(dtype)

        for i in range(args.warmup):
            out = model.inference(img0, img1, embt)

        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.reset_peak_memory_stats()

        start.record()
        for i in range(args.iters):
            out = model.inference(img0, img1, embt)
        end.record()
        torch.cuda.synchronize()
        elapsed_ms = start.elapsed_time(end)

        print('Model: {}\tParameters: {:.2f}M\tTime: {:.2f}ms\tPeak memory: {:.1f}MB'.format(
            model_name, count_params(model) / 1e6, elapsed_ms / args.iters,
            torch.cuda.max_memory_allocated() / 1024 ** 2))

        del model
        torch.cuda.empty_cache()
