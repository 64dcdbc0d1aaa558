"""
Stage 1 of LAV: train the privileged BEV motion planner on ground-truth BEV maps of all vehicles
("learning from all vehicles"). Usage:

    python -m lav.train_bev --config-path config.yaml --device cuda --num-epochs 160 --multi-gpu
"""
import os
import argparse
import tqdm
import yaml
import numpy as np

import torch
from torch import nn, optim
import torch.nn.functional as F

from lav.models.bev_planner import BEVPlanner
from lav.utils.datasets import get_data_loader
from lav.utils.logger import Logger
from lav.utils import _numpy


class LAV:
    def __init__(self, args):
        with open(args.config_path, 'r') as f:
            config = yaml.safe_load(f)
        for key, value in config.items():
            setattr(self, key, value)

        self.device = torch.device(args.device)
        self.multi_gpu = args.multi_gpu

        self.num_speeds = len(self.speeds) if hasattr(self, 'speeds') else 4
        self.bev_planner = BEVPlanner(
            pixels_per_meter=self.pixels_per_meter,
            crop_size=self.crop_size,
            x_offset=self.x_offset, y_offset=self.y_offset,
            feature_x_jitter=self.feature_x_jitter,
            feature_angle_jitter=self.feature_angle_jitter,
            num_plan=self.num_plan,
            k=self.k,
            num_out_feature=self.num_out_feature,
            num_cmds=self.num_cmds,
        ).to(self.device)

        if self.multi_gpu:
            self.bev_planner = nn.DataParallel(self.bev_planner)

        self.bev_optim = optim.Adam(self.bev_planner.parameters(), lr=args.lr)
        self.bev_scheduler = optim.lr_scheduler.StepLR(self.bev_optim, step_size=32, gamma=0.5)

    def state_dict(self):
        if self.multi_gpu:
            return self.bev_planner.module.state_dict()
        return self.bev_planner.state_dict()

    def load_bev(self, path):
        state_dict = torch.load(path, map_location=self.device)
        if self.multi_gpu:
            self.bev_planner.module.load_state_dict(state_dict)
        else:
            self.bev_planner.load_state_dict(state_dict)

    def train_bev(self, bev, ego_locs, cmd, nxp, bra, locs, oris, typs, num_objs):
        bev = bev.float().permute(0, 3, 1, 2).to(self.device)
        ego_locs = ego_locs.float().to(self.device)
        locs = locs.float().to(self.device)
        oris = oris.float().to(self.device)
        typs = typs.long().to(self.device)
        cmd = cmd.long().to(self.device)
        nxp = nxp.float().to(self.device)
        bra = bra.float().to(self.device)
        num_objs = num_objs.long().to(self.device)

        idxs = []
        for i, num_obj in enumerate(num_objs):
            idxs.extend([i] * num_obj)

        # Flatten all other vehicles so that we can train on their future trajectories too
        flat_locs = torch.cat([l[:n] for l, n in zip(locs, num_objs)])
        flat_oris = torch.cat([o[:n] for o, n in zip(oris, num_objs)])
        flat_typs = torch.cat([t[:n] for t, n in zip(typs, num_objs)])

        ego_plan_locs, ego_cast_locs, other_cast_locs, other_cast_cmds = self.bev_planner(
            bev, ego_locs[:, 0], flat_locs[:, 0], flat_oris, nxp, torch.tensor(idxs, dtype=torch.long).cuda())

        ego_plan_loss = F.l1_loss(ego_plan_locs, ego_locs[:, None, 1:].expand_as(ego_plan_locs))
        ego_cast_loss = F.l1_loss(
            ego_cast_locs.gather(1, cmd[:, None, None, None].expand(-1, 1, *ego_cast_locs.shape[2:])).squeeze(1),
            ego_locs[:, 1:])

        vehicle_mask = (flat_typs == 1).float()
        other_cast_loss = (F.l1_loss(other_cast_locs, flat_locs[:, None, 1:].expand_as(other_cast_locs),
                                     reduction='none').mean(dim=[1, 2, 3]) * vehicle_mask).sum() / (vehicle_mask.sum() + 1e-6)

        loss = ego_plan_loss + ego_cast_loss + self.other_weight * other_cast_loss

        self.bev_optim.zero_grad()
        loss.backward()
        self.bev_optim.step()

        return dict(
            ego_plan_loss=float(ego_plan_loss),
            ego_cast_loss=float(ego_cast_loss),
            other_cast_loss=float(other_cast_loss),
            bev=_numpy(bev[0].argmax(0) if bev.shape[1] > 1 else bev[0, 0]),
            ego_plan_locs=_numpy(ego_plan_locs[0]),
            ego_cast_locs=_numpy(ego_cast_locs[0]),
        )


def main(args):
    lav = LAV(args)
    data_loader = get_data_loader('bev', args)
    logger = Logger('lav_bev', args)
    save_dir = logger.save_dir

    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True

    if args.load_path:
        lav.load_bev(args.load_path)

    global_it = 0
    for epoch in range(args.num_epoch):
        for data in tqdm.tqdm(data_loader, desc=f'Epoch {epoch}'):
            opt_info = lav.train_bev(*data)

            if global_it % args.num_per_log == 0:
                opt_info['gpu_mem_mb'] = torch.cuda.memory_allocated() / 2 ** 20
                logger.log_bev_info(global_it, opt_info)

            global_it += 1

        lav.bev_scheduler.step()

        if (epoch + 1) % args.num_per_save == 0:
            bev_path = f'{save_dir}/bev_{epoch + 1}.th'
            torch.save(lav.state_dict(), bev_path)
            print(f'save to {bev_path}')
            logger.save([bev_path])


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--config-path', default='config.yaml')
    parser.add_argument('--device', default='cuda', choices=['cuda', 'cpu'])
    parser.add_argument('--multi-gpu', action='store_true')
    parser.add_argument('--load-path', type=str, default=None)

    # Training misc
    parser.add_argument('--num-epoch', type=int, default=160)
    parser.add_argument('--num-per-log', type=int, default=100, help='log per iter')
    parser.add_argument('--num-per-save', type=int, default=10, help='save per epoch')
    parser.add_argument('--seed', type=int, default=2021)

    parser.add_argument('--batch-size', type=int, default=512)
    parser.add_argument('--lr', type=float, default=3e-4)
    parser.add_argument('--num-workers', type=int, default=16)

    # Reproducibility (still not fully determistic due to CUDA/CuDNN)
    parser.add_argument('--num-plan', type=int, default=10)

    args = parser.parse_args()
    if not torch.cuda.is_available():
        print('CUDA not available, training on the CPU (this will be slow)')
        args.device = 'cpu'
        args.multi_gpu = False
    main(args)
