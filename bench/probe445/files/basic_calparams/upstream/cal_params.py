import argparse
import os
import time

import numpy as np
import torch
from thop import profile

from net import Net

os.environ['CUDA_VISIBLE_DEVICES'] = "0"
parser = argparse.ArgumentParser(description="PyTorch BasicIRSTD Parameter and FLOPs")
parser.add_argument("--model_names", default=['ACM', 'ALCNet', 'RISTDnet', 'UIUNet', 'U-Net', 'RDIAN',
                                              'ISTDU-Net', 'DNANet', 'SCTransNet'], type=list,
                    help="model_name: 'ACM', 'ALCNet', 'DNANet', 'ISNet', 'UIUNet', 'RDIAN', 'ISTDU-Net', "
                         "'U-Net', 'RISTDnet'")
parser.add_argument("--img_size", type=int, default=256)
parser.add_argument("--warmup", type=int, default=10, help="warm-up iterations before timing")
parser.add_argument("--iters", type=int, default=100, help="timed iterations for FPS")

global opt
opt = parser.parse_args()


def measure_fps(net, input_img, warmup, iters):
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros((iters, 1))
    with torch.no_grad():
        for _ in range(warmup):
            _ = net(input_img)
        for rep in range(iters):
            starter.record()
            _ = net(input_img)
            ender.record()
            # wait for the GPU to finish
            torch.cuda.synchronize()
            timings[rep] = starter.elapsed_time(ender)
    mean_ms = np.sum(timings) / iters
    return mean_ms, 1000.0 / mean_ms


if __name__ == '__main__':
    opt.f = open('./params_' + (time.ctime()).replace(' ', '_').replace(':', '_') + '.txt', 'w')
    input_img = torch.rand(1, 1, opt.img_size, opt.img_size).cuda()
    print('Device: %s' % torch.cuda.get_device_name(0))
    for model_name in opt.model_names:
        net = Net(model_name, mode='test').cuda()
        net.eval()
        flops, params = profile(net, inputs=(input_img,))
        mean_ms, fps = measure_fps(net, input_img, opt.warmup, opt.iters)
        print(model_name)
        print('Params: %2fM' % (params / 1e6))
        print('FLOPs: %2fGFLOPs' % (flops / 1e9))
        print('Latency: %.2f ms, FPS: %.1f' % (mean_ms, fps))
        opt.f.write(model_name + '\n')
        opt.f.write('Params: %2fM\n' % (params / 1e6))
        opt.f.write('FLOPs: %2fGFLOPs\n' % (flops / 1e9))
        opt.f.write('Latency: %.2f ms, FPS: %.1f\n' % (mean_ms, fps))
        opt.f.write('\n')
        torch.cuda.empty_cache()
    opt.f.close()
