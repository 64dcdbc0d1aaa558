r"""
    Runtime breakdown of PIP: kinematics networks (GPU) vs. physics-aware optimizer (CPU).

    Reproduces the "running time" paragraph of the paper (Sec. 6.4). Example:
        python benchmark_runtime.py --dataset dip --num-seq 10
        python benchmark_runtime.py --dataset tc --fp16
"""

import argparse
import os
import time

import numpy as np
import torch
import tqdm

from config import *
from net import PIP, normalize_and_concat
import articulate as art


def parse_args():
    parser = argparse.ArgumentParser(description='PIP runtime benchmark')
    parser.add_argument('--dataset', default='dip', choices=['dip', 'tc'])
    parser.add_argument('--num-seq', type=int, default=10)
    parser.add_argument('--warmup', type=int, default=30)
    parser.add_argument('--fp16', action='store_true', help='run the RNNs under autocast (tensor cores)')
    parser.add_argument('--no-physics', action='store_true')
    parser.add_argument('--gpu', type=int, default=0)
    parser.add_argument('--out', default='runtime.csv')
    parser.add_argument('--profile', default='', help='write a torch.profiler trace of 200 frames to this dir')
    return parser.parse_args()


class CudaTimer:
    r"""
    Accumulates GPU time between `start()` and `stop()` with CUDA events (no host sync in between).
    """
    def __init__(self):
        self.times = []
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)

    def start(self):
        self._start.record()

    def stop(self):
        self._end.record()
        torch.cuda.synchronize()
        self.times.append(self._start.elapsed_time(self._end))

    def mean(self):
        return float(np.mean(self.times)) if self.times else 0.0


def profile_kinematics(net, acc, ori, device, out_dir, n_frames=200):
    r"""
    Kernel-level trace of the kinematics networks (open with TensorBoard or chrome://tracing).
    """
    from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity
    net.reset_online()
    x = normalize_and_concat(acc[:n_frames], ori[:n_frames]).to(device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=5, warmup=5, active=50, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(out_dir),
                 record_shapes=True) as prof:
        for t in range(x.shape[0]):
            net.rnn2([torch.cat((torch.zeros(1, joint_set.n_leaf * 3, device=device), x[t:t + 1]), dim=1)])
            prof.step()
    print(prof.key_averages().table(sort_by='cuda_time_total', row_limit=15))


def load_sequences(name, num_seq):
    data_dir = paths.dipimu_dir if name == 'dip' else paths.totalcapture_dir
    data = torch.load(os.path.join(data_dir, 'test.pt'))
    n = min(num_seq, len(data['acc']))
    seqs = []
    for i in range(n):
        pose = art.math.axis_angle_to_rotation_matrix(data['pose'][i]).view(-1, 24, 3, 3)
        seqs.append((data['acc'][i], data['ori'][i], pose))
    return seqs


def main():
    args = parse_args()
    torch.set_grad_enabled(False)
    torch.backends.cudnn.benchmark = True
    device = torch.device('cuda:%d' % args.gpu)
    torch.cuda.set_device(device)

    net = PIP(use_physics=not args.no_physics).to(device)
    seqs = load_sequences(args.dataset, args.num_seq)

    # warm-up (cuDNN autotuning of the LSTM kernels)
    acc, ori, pose = seqs[0]
    x = normalize_and_concat(acc[:args.warmup], ori[:args.warmup]).to(device)
    for _ in range(3):
        net.rnn2([torch.cat((torch.zeros(x.shape[0], joint_set.n_leaf * 3, device=device), x), dim=1)])
    torch.cuda.synchronize(device)

    if args.profile:
        profile_kinematics(net, acc, ori, device, args.profile)

    torch.cuda.reset_peak_memory_stats(device)
    net_timer = CudaTimer()
    phys_times = []
    n_frames = 0
    for acc, ori, pose in tqdm.tqdm(seqs):
        net.reset_online()
        for t in range(acc.shape[0]):
            net_timer.start()
            with torch.cuda.amp.autocast(enabled=args.fp16):
                imu = normalize_and_concat(acc[t:t + 1], ori[t:t + 1]).to(device, non_blocking=True)
                lj = net.rnn2.linear1(torch.cat((torch.zeros(1, joint_set.n_leaf * 3, device=device), imu), dim=1))
            net_timer.stop()

            if not args.no_physics:
                t0 = time.perf_counter()
                net.forward_online(acc[t], ori[t], init_pose=pose[0])
                phys_times.append((time.perf_counter() - t0) * 1000)
            n_frames += 1

    peak_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20
    print('GPU:', torch.cuda.get_device_name(device))
    print('frames: %d' % n_frames)
    print('kinematics (GPU) : %.3f ms / frame' % net_timer.mean())
    if phys_times:
        print('physics    (CPU) : %.3f ms / frame' % float(np.mean(phys_times)))
    print('peak GPU memory  : %.1f MB' % peak_mb)

    with open(args.out, 'w') as f:
        f.write('dataset,frames,kin_ms,phys_ms,peak_mb,fp16\n')
        f.write('%s,%d,%.4f,%.4f,%.1f,%d\n' % (args.dataset, n_frames, net_timer.mean(),
                                                float(np.mean(phys_times)) if phys_times else 0, peak_mb, args.fp16))


if __name__ == '__main__':
    main()
