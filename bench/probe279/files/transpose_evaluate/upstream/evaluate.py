r"""
    Evaluate the pose and translation estimation of TransPose on DIP-IMU and TotalCapture.

    python evaluate.py --dataset dip --device cuda
    python evaluate.py --dataset tc --device cuda --online
"""

import argparse
import os
import time

import torch
import tqdm

import articulate as art
from config import *
from net import TransPoseNet
from utils import normalize_and_concat


class PoseEvaluator:
    def __init__(self, device=torch.device('cpu')):
        self._eval_fn = art.FullMotionEvaluator(paths.smpl_file, joint_mask=torch.tensor([1, 2, 16, 17]),
                                                device=device)

    def eval(self, pose_p, pose_t):
        pose_p = pose_p.clone().view(-1, 24, 3, 3)
        pose_t = pose_t.clone().view(-1, 24, 3, 3)
        pose_p[:, joint_set.ignored] = torch.eye(3, device=pose_p.device)
        pose_t[:, joint_set.ignored] = torch.eye(3, device=pose_t.device)
        errs = self._eval_fn(pose_p, pose_t)
        return torch.stack([errs[9], errs[3], errs[0] * 100, errs[1] * 100, errs[4] / 100])

    @staticmethod
    def print(errors):
        for i, name in enumerate(['SIP Error (deg)', 'Angular Error (deg)', 'Positional Error (cm)',
                                  'Mesh Error (cm)', 'Jitter Error (100m/s^3)']):
            print('%s: %.2f (+/- %.2f)' % (name, errors[i, 0], errors[i, 1]))


class TranslationEvaluator:
    r"""
    Root translation error accumulated over windows of 1..10 seconds (TransPose Fig. 7).
    """
    def __init__(self, fps=60, max_seconds=10):
        self.fps = fps
        self.max_seconds = max_seconds

    def eval(self, tran_p, tran_t):
        tran_p = tran_p.view(-1, 3).cpu()
        tran_t = tran_t.view(-1, 3).cpu()
        errs = []
        for s in range(1, self.max_seconds + 1):
            n = s * self.fps
            if tran_t.shape[0] <= n:
                errs.append(float('nan'))
                continue
            move_p = tran_p[n:] - tran_p[:-n]
            move_t = tran_t[n:] - tran_t[:-n]
            errs.append((move_p - move_t).norm(dim=1).mean().item())
        return torch.tensor(errs)


def load_dataset(name):
    if name == 'dip':
        return torch.load(os.path.join(paths.dipimu_dir, 'test.pt'))
    elif name == 'tc':
        return torch.load(os.path.join(paths.totalcapture_dir, 'test.pt'))
    raise ValueError('unknown dataset %s' % name)


def _sync(device):
    # kernels are launched asynchronously; wait before reading the wall clock
    if device.type == 'cuda':
        torch.cuda.synchronize(device)


def evaluate_pose(args, data):
    device = torch.device(args.device)
    evaluator = PoseEvaluator(device=device)
    net = TransPoseNet(args.num_past_frame, args.num_future_frame).to(device)

    xs = [normalize_and_concat(a, r).to(device) for a, r in zip(data['acc'], data['ori'])]
    ys = [(art.math.axis_angle_to_rotation_matrix(p).view(-1, 24, 3, 3), t) for p, t in zip(data['pose'], data['tran'])]
    offline_errs, online_errs, runtimes = [], [], []
    for x, y in tqdm.tqdm(list(zip(xs, ys))):
        net.reset()
        pose_t, tran_t = y
        if args.online:
            online_results = [net.forward_online(f) for f in torch.cat((x, x[-1].repeat(args.num_future_frame, 1)))]
            pose_p_online, tran_p_online = [torch.stack(_)[args.num_future_frame:] for _ in zip(*online_results)]
            online_errs.append(evaluator.eval(pose_p_online.to(device), pose_t.to(device)))
        _sync(device)
        t0 = time.time()
        pose_p_offline, tran_p_offline = net.forward_offline(x)
        _sync(device)
        runtimes.append((time.time() - t0) / x.shape[0])
        offline_errs.append(evaluator.eval(pose_p_offline.to(device), pose_t.to(device)))

    print('============== offline ================')
    evaluator.print(torch.stack(offline_errs).mean(dim=0))
    if args.save:
        save_results(args.save, args.dataset, 'offline', torch.stack(offline_errs))
    print('mean per-frame time: %.3f ms' % (sum(runtimes) / len(runtimes) * 1000))
    if args.online:
        print('============== online ================')
        evaluator.print(torch.stack(online_errs).mean(dim=0))
        if args.save:
            save_results(args.save, args.dataset, 'online', torch.stack(online_errs))


def save_results(path, dataset, mode, errs):
    r"""
    Append per-sequence errors to a csv (one row per sequence) so that runs can be compared later.
    errs: [num_seq, 5, 2] (metric, mean/std)
    """
    names = ['sip_deg', 'ang_deg', 'jpe_cm', 'mpe_cm', 'jitter']
    new_file = not os.path.exists(path)
    with open(path, 'a') as f:
        if new_file:
            f.write('dataset,mode,seq,' + ','.join(names) + '\n')
        for i, e in enumerate(errs):
            f.write('%s,%s,%d,' % (dataset, mode, i) + ','.join('%.4f' % v for v in e[:, 0].tolist()) + '\n')


def evaluate_translation(args, data):
    device = torch.device(args.device)
    net = TransPoseNet(args.num_past_frame, args.num_future_frame).to(device)
    evaluator = TranslationEvaluator()
    errs = []
    for a, r, t in tqdm.tqdm(list(zip(data['acc'], data['ori'], data['tran']))):
        net.reset()
        x = normalize_and_concat(a, r).to(device)
        _, tran_p = net.forward_offline(x)
        errs.append(evaluator.eval(tran_p, t))
    errs = torch.stack(errs)
    for s in range(errs.shape[1]):
        valid = errs[:, s][~errs[:, s].isnan()]
        print('%2ds: %.3f m' % (s + 1, valid.mean().item()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--dataset', choices=['dip', 'tc'], default='dip')
    parser.add_argument('--device', default='cuda', help='cuda / cpu')
    parser.add_argument('--online', action='store_true')
    parser.add_argument('--translation', action='store_true', help='only evaluate translation (TotalCapture)')
    parser.add_argument('--num-past-frame', type=int, default=20)
    parser.add_argument('--num-future-frame', type=int, default=5)
    parser.add_argument('--save', default='', help='append per-sequence errors to this csv')
    args = parser.parse_args()

    if args.device.startswith('cuda') and not torch.cuda.is_available():
        print('CUDA is not available, falling back to CPU')
        args.device = 'cpu'

    torch.set_grad_enabled(False)
    data = load_dataset(args.dataset)
    if args.translation:
        evaluate_translation(args, data)
    else:
        evaluate_pose(args, data)
    torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
