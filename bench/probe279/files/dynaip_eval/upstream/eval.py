"""
Evaluate a trained DynaIP checkpoint on DIP-IMU / TotalCapture (offline and online protocols).

    python eval.py --config configs/dynaip_xsens.yaml --ckpt work_dirs/dynaip_xsens/best.pth --dataset dip
"""
import argparse
import json
import os.path as osp
import time
from contextlib import contextmanager

import numpy as np
import smplx
import torch
import yaml
from easydict import EasyDict
from tqdm import tqdm

from data.dataset import DIPEvalDataset, TotalCaptureEvalDataset
from model.dynaip import DynaIP
from utils.misc import get_logger, to_device
from utils.rotation import r6d_to_rotation_matrix, rotation_matrix_to_axis_angle, angle_error_deg

SIP_JOINTS = [1, 2, 16, 17]


@contextmanager
def gpu_timer(store, device):
    sync = device.type == 'cuda'
    if sync:
        torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    yield
    if sync:
        torch.cuda.synchronize()
    store.append(time.perf_counter() - t0)


class MotionMetrics:
    """
    SIP error, global angular error, joint / mesh position error (cm) and jitter (km/s^3), as in TransPose/PIP.
    """
    def __init__(self, smpl_dir, device, fps=60):
        self.body = smplx.create(smpl_dir, model_type='smpl', gender='male', batch_size=1).to(device)
        self.device = device
        self.fps = fps
        self.reset()

    def reset(self):
        self.acc = {k: [] for k in ['sip', 'ang', 'jpe', 'mpe', 'jitter']}

    def _fk(self, R):
        aa = rotation_matrix_to_axis_angle(R.view(-1, 3, 3)).view(R.shape[0], 72)
        out = self.body(global_orient=aa[:, :3], body_pose=aa[:, 3:], betas=torch.zeros(R.shape[0], 10, device=self.device),
                        return_verts=True)
        return out.joints[:, :24], out.vertices

    def update(self, R_p, R_t):
        R_p, R_t = R_p.to(self.device), R_t.to(self.device)
        glb_p = self.body_global(R_p)
        glb_t = self.body_global(R_t)
        self.acc['sip'].append(angle_error_deg(glb_p[:, SIP_JOINTS], glb_t[:, SIP_JOINTS]).mean().item())
        self.acc['ang'].append(angle_error_deg(glb_p, glb_t).mean().item())
        j_p, v_p = self._fk(R_p)
        j_t, v_t = self._fk(R_t)
        off = (j_t[:, :1] - j_p[:, :1])
        self.acc['jpe'].append(((j_p + off - j_t).norm(dim=-1).mean() * 100).item())
        self.acc['mpe'].append(((v_p + off - v_t).norm(dim=-1).mean() * 100).item())
        jerk = (j_p[3:] - 3 * j_p[2:-1] + 3 * j_p[1:-2] - j_p[:-3]) * self.fps ** 3
        self.acc['jitter'].append((jerk.norm(dim=-1).mean() / 1000).item())

    def body_global(self, R):
        parents = self.body.parents.tolist()
        glb = [R[:, 0]]
        for i in range(1, 24):
            glb.append(glb[parents[i]] @ R[:, i])
        return torch.stack(glb, dim=1)

    def summary(self):
        return {k: (float(np.mean(v)), float(np.std(v))) for k, v in self.acc.items() if v}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', default='configs/dynaip_xsens.yaml')
    parser.add_argument('--ckpt', required=True)
    parser.add_argument('--dataset', choices=['dip', 'tc'], default='dip')
    parser.add_argument('--smpl-dir', default='data/smpl_models')
    parser.add_argument('--out', default=None)
    parser.add_argument('--per-seq-csv', default=None)
    args = parser.parse_args()

    with open(args.config) as f:
        cfg = EasyDict(yaml.safe_load(f))
    logger = get_logger()
    device = torch.device(cfg.eval.device)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    model = DynaIP(**cfg.model.args)
    state = torch.load(args.ckpt, map_location='cpu')
    model.load_state_dict(state['model'])
    model.to(device).eval()
    logger.info('loaded %s (epoch %d)' % (args.ckpt, state['epoch']))

    ds = DIPEvalDataset(cfg.data.dip_root, split='test') if args.dataset == 'dip' \
        else TotalCaptureEvalDataset(cfg.data.root, split='test')
    metrics_off = MotionMetrics(args.smpl_dir, device)
    metrics_on = MotionMetrics(args.smpl_dir, device)
    t_off, t_on = [], []

    with torch.inference_mode():
        for seq in tqdm(ds, ncols=100):
            seq = to_device(seq, device)
            imu = seq['imu'].unsqueeze(0)
            R_t = r6d_to_rotation_matrix(seq['pose_r6d']).view(-1, 24, 3, 3)

            with gpu_timer(t_off, device):
                out = model(imu)
            R_p = r6d_to_rotation_matrix(out['pose_r6d'][0]).view(-1, 24, 3, 3)
            metrics_off.update(R_p, R_t)

            if cfg.eval.online:
                model.reset_online()
                preds = []
                with gpu_timer(t_on, device):
                    for t in range(imu.shape[1]):
                        preds.append(model.forward_online(imu[:, t], cfg.eval.past_frames, cfg.eval.future_frames))
                R_p = r6d_to_rotation_matrix(torch.cat(preds)).view(-1, 24, 3, 3)
                metrics_on.update(R_p, R_t)

    res = {'offline': metrics_off.summary(),
           'offline_ms_per_frame': 1000 * sum(t_off) / sum(len(s['imu']) for s in ds)}
    if cfg.eval.online:
        res['online'] = metrics_on.summary()
        res['online_ms_per_frame'] = 1000 * sum(t_on) / sum(len(s['imu']) for s in ds)
    res['device'] = torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'
    res['checkpoint'] = args.ckpt
    res['dataset'] = args.dataset
    print(json.dumps(res, indent=2))
    if args.per_seq_csv:
        with open(args.per_seq_csv, 'w') as f:
            keys = list(metrics_off.acc.keys())
            f.write('seq,' + ','.join('off_' + k for k in keys) +
                    (',' + ','.join('on_' + k for k in keys) if cfg.eval.online else '') + '\n')
            for i in range(len(metrics_off.acc['sip'])):
                row = [metrics_off.acc[k][i] for k in keys]
                if cfg.eval.online:
                    row += [metrics_on.acc[k][i] for k in keys]
                f.write('%d,' % i + ','.join('%.4f' % v for v in row) + '\n')
    if args.out:
        with open(args.out, 'w') as f:
            json.dump(res, f, indent=2)


if __name__ == '__main__':
    main()
