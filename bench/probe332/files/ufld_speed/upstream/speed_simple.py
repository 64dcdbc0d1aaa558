"""Measure the pure network latency of UFLD (no image decoding / pre-processing).

    python speed_simple.py --backbone 18 --height 288 --width 800

The numbers in the paper were measured on a single GTX 1080Ti with this script.
"""
import argparse
import time

import numpy as np
import torch

from model.model import parsingNet

# torch.backends.cudnn.deterministic = False


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--backbone', default='18', type=str)
    parser.add_argument('--griding_num', default=100, type=int)
    parser.add_argument('--cls_num_per_lane', default=56, type=int)
    parser.add_argument('--height', default=288, type=int)
    parser.add_argument('--width', default=800, type=int)
    parser.add_argument('--iters', default=100, type=int)
    parser.add_argument('--half', action='store_true', help='run the model in fp16')
    return parser.parse_args()


if __name__ == '__main__':
    args = parse_args()
    torch.backends.cudnn.benchmark = True

    net = parsingNet(pretrained=False, backbone=args.backbone,
                     cls_dim=(args.griding_num + 1, args.cls_num_per_lane, 4), use_aux=False).cuda()
    # net = parsingNet(pretrained = False, backbone='18',cls_dim = (200+1,18,4),use_aux=False).cuda()
    net.eval()

    x = torch.zeros((1, 3, args.height, args.width)).cuda() + 1
    if args.half:
        net = net.half()
        x = x.half()

    with torch.no_grad():
        for i in range(10):
            y = net(x)

        t_all = []
        for i in range(args.iters):
            torch.cuda.synchronize()
            t1 = time.time()
            y = net(x)
            torch.cuda.synchronize()  # kernels run asynchronously, wait before stopping the clock
            t2 = time.time()
            t_all.append(t2 - t1)

    print('device:', torch.cuda.get_device_name(0))
    print('average time:', np.mean(t_all) / 1)
    print('average fps:', 1 / np.mean(t_all))

    print('fastest time:', min(t_all) / 1)
    print('fastest fps:', 1 / min(t_all))

    print('slowest time:', max(t_all) / 1)
    print('slowest fps:', 1 / max(t_all))
