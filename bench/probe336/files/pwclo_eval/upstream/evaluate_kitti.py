"""
Run a trained PWCLO-Net over KITTI odometry sequences, accumulate the trajectory and
report KITTI odometry metrics (t_rel %, r_rel deg/100m) plus per-frame runtime.

    python evaluate_kitti.py --ckpt log/pwclo/best.pth --seqs 07 08 09 10 --gpu 0
"""
import argparse
import os
import time

import numpy as np
import torch
import yaml
from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler
from tqdm import tqdm

from datasets.kitti_odometry import load_velodyne, load_calib, sample_points
from models.pwclo import PWCLONet
from utils.pose import quat_to_mat


# ----------------------------------------------------------------------------- KITTI odometry metrics
LENGTHS = [100, 200, 300, 400, 500, 600, 700, 800]


def load_gt_poses(path):
    poses = []
    with open(path) as f:
        for line in f:
            T = np.eye(4, dtype=np.float64)
            T[:3, :] = np.array([float(x) for x in line.split()]).reshape(3, 4)
            poses.append(T)
    return np.stack(poses)


def trajectory_distances(poses):
    dist = [0.0]
    for i in range(1, len(poses)):
        dist.append(dist[-1] + np.linalg.norm(poses[i, :3, 3] - poses[i - 1, :3, 3]))
    return np.array(dist)


def last_frame_from_segment_length(dist, first_frame, length):
    for i in range(first_frame, len(dist)):
        if dist[i] > dist[first_frame] + length:
            return i
    return -1


def rotation_error(pose_error):
    a, b, c = pose_error[0, 0], pose_error[1, 1], pose_error[2, 2]
    d = 0.5 * (a + b + c - 1.0)
    return np.arccos(max(min(d, 1.0), -1.0))


def translation_error(pose_error):
    return np.linalg.norm(pose_error[:3, 3])


class KittiOdomEval(object):
    """Average relative translation / rotation error over 100..800m segments (KITTI devkit protocol)."""

    def __init__(self, gt_dir, step_size=10):
        self.gt_dir = gt_dir
        self.step_size = step_size

    def calc_sequence_errors(self, poses_gt, poses_result):
        err = []
        dist = trajectory_distances(poses_gt)
        for first_frame in range(0, len(poses_gt), self.step_size):
            for length in LENGTHS:
                last_frame = last_frame_from_segment_length(dist, first_frame, length)
                if last_frame == -1:
                    continue
                pose_delta_gt = np.linalg.inv(poses_gt[first_frame]) @ poses_gt[last_frame]
                pose_delta_result = np.linalg.inv(poses_result[first_frame]) @ poses_result[last_frame]
                pose_error = np.linalg.inv(pose_delta_result) @ pose_delta_gt
                r_err = rotation_error(pose_error)
                t_err = translation_error(pose_error)
                err.append([first_frame, r_err / float(length), t_err / float(length), length])
        return np.array(err)

    def eval_seq(self, seq, poses_result):
        poses_gt = load_gt_poses(os.path.join(self.gt_dir, f'{seq}.txt'))
        n = min(len(poses_gt), len(poses_result))
        err = self.calc_sequence_errors(poses_gt[:n], poses_result[:n])
        if len(err) == 0:
            return float('nan'), float('nan')
        return float(err[:, 2].mean()), float(err[:, 1].mean())


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--ckpt', type=str, required=True)
    parser.add_argument('--cfg', type=str, default=None, help='defaults to the cfg stored in the checkpoint')
    parser.add_argument('--data_root', type=str, default='data/kitti_odometry')
    parser.add_argument('--seqs', nargs='+', default=['07', '08', '09', '10'])
    parser.add_argument('--out_dir', type=str, default='results/pwclo')
    parser.add_argument('--gpu', type=str, default='0', help='GPU id to run on')
    parser.add_argument('--num_points', type=int, default=8192)
    parser.add_argument('--profile', action='store_true', help='dump a trace of the first frames')
    parser.add_argument('--half', action='store_true', help='run the network in fp16')
    return parser.parse_args()


def to_homogeneous(R, t):
    T = np.eye(4, dtype=np.float64)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


@torch.no_grad()
def run_sequence(model, seq, args, num_points, prof=None):
    velo_dir = os.path.join(args.data_root, 'sequences', seq, 'velodyne')
    calib = load_calib(os.path.join(args.data_root, 'sequences', seq, 'calib.txt'))
    Tr = calib['Tr']
    Tr_inv = np.linalg.inv(Tr)
    frames = sorted(os.listdir(velo_dir))

    poses = [np.eye(4, dtype=np.float64)]
    runtimes = []
    prev = sample_points(load_velodyne(os.path.join(velo_dir, frames[0])), num_points)
    for name in tqdm(frames[1:], desc=f'seq {seq}'):
        cur = sample_points(load_velodyne(os.path.join(velo_dir, name)), num_points)

        pc1 = torch.from_numpy(cur[:, :3]).float().cuda().unsqueeze(0)
        pc2 = torch.from_numpy(prev[:, :3]).float().cuda().unsqueeze(0)
        if args.half:
            pc1, pc2 = pc1.half(), pc2.half()

        torch.cuda.synchronize()
        t0 = time.perf_counter()
        q, t = model(pc1, pc2, pc1, pc2)[0]
        torch.cuda.synchronize()  # make the runtime include the whole forward
        runtimes.append(time.perf_counter() - t0)
        if prof is not None:
            prof.step()

        R = quat_to_mat(q.float()).squeeze(0).cpu().numpy().astype(np.float64)
        t = t.float().squeeze(0).cpu().numpy().astype(np.float64)
        T_lidar = to_homogeneous(R, t)
        # LiDAR frame -> camera frame, as in the KITTI ground truth
        T_cam = Tr @ T_lidar @ Tr_inv
        poses.append(poses[-1] @ T_cam)
        prev = cur

    return np.stack(poses), np.array(runtimes)


def main():
    args = parse_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu
    torch.backends.cudnn.benchmark = True
    device = torch.device('cuda:0')

    ckpt = torch.load(args.ckpt, map_location=lambda storage, loc: storage.cuda())
    if args.cfg is not None:
        with open(args.cfg) as f:
            cfg = yaml.safe_load(f)
    else:
        cfg = ckpt['cfg']

    model = PWCLONet(cfg['model'])
    model.load_state_dict(ckpt['model'])
    model = model.cuda().eval()
    if args.half:
        model = model.half()
    print(f'loaded {args.ckpt} (epoch {ckpt["epoch"]}) on {torch.cuda.get_device_name(device)}')

    os.makedirs(args.out_dir, exist_ok=True)
    prof = None
    if args.profile:
        prof = profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=5, warmup=5, active=10, repeat=1),
            on_trace_ready=tensorboard_trace_handler(os.path.join(args.out_dir, 'trace')),
            record_shapes=True,
        )
        prof.start()

    evaluator = KittiOdomEval(os.path.join(args.data_root, 'poses'))
    all_runtimes = []
    for seq in args.seqs:
        poses, runtimes = run_sequence(model, seq, args, args.num_points, prof)
        np.savetxt(os.path.join(args.out_dir, f'{seq}.txt'), poses[:, :3, :].reshape(-1, 12), fmt='%.6e')
        all_runtimes.append(runtimes)
        t_rel, r_rel = evaluator.eval_seq(seq, poses)
        print(f'seq {seq}: t_rel {t_rel * 100:.2f}%  r_rel {r_rel * 100 * 180 / np.pi:.2f} deg/100m  '
              f'{1000 * runtimes.mean():.1f} ms/frame')

    if prof is not None:
        prof.stop()

    all_runtimes = np.concatenate(all_runtimes)
    # the first frames include cudnn autotuning, skip them
    print(f'mean runtime {1000 * all_runtimes[10:].mean():.1f} ms/frame, '
          f'peak memory {torch.cuda.max_memory_allocated(device) / 2 ** 20:.0f} MB')


if __name__ == '__main__':
    main()
