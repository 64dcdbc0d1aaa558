import os
import sys
import yaml
import argparse
import numpy as np
from tqdm import tqdm
from imageio import imwrite

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

import LED2Net


def parse_args():
    parser = argparse.ArgumentParser(description='Training script for LED^2-Net',
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--config', type=str, required=True, help='config file')
    parser.add_argument('--mode', type=str, default='train', choices=['train', 'val'])
    parser.add_argument('--resume', action='store_true', help='resume from the latest checkpoint')
    return parser.parse_args()


def set_seed(seed):
    np.random.seed(seed)
    torch.manual_seed(seed)


def build_loader(dataset_args, split):
    args = dataset_args[split].copy()
    batch_size = args.pop('batch_size')
    num_workers = args.pop('num_workers')
    shuffle = args.pop('shuffle')
    drop_last = args.pop('drop_last')
    dataset = LED2Net.Dataset.Matterport3DDataset(**args)
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=num_workers,
                        shuffle=shuffle, drop_last=drop_last, pin_memory=True)
    return dataset, loader


class Trainer(object):
    def __init__(self, config, device):
        self.config = config
        self.device = device
        exp_args = config['exp_args']
        loss_args = config['loss_args']

        self.net = LED2Net.Network(**config['network_args']).to(device)
        # DataParallel over all visible GPUs; checkpoints always store the bare net
        self.model = nn.DataParallel(self.net)
        self.optim = torch.optim.Adam(self.net.parameters(),
                                      lr=config['optimizer_args']['lr'],
                                      weight_decay=config['optimizer_args']['weight_decay'])
        self.scheduler = torch.optim.lr_scheduler.MultiStepLR(self.optim,
                                                              milestones=config['optimizer_args']['milestones'],
                                                              gamma=config['optimizer_args']['gamma'])
        self.equi_grid = LED2Net.Conversion.EquirecGrid()
        self.render = LED2Net.Render.ShadowRender(grid_size=loss_args['grid_size'],
                                                  grid_length=loss_args['grid_length'])
        self.camera_height = exp_args['camera_height']
        self.plane_w = loss_args['plane_depth_weight']
        self.render_w = loss_args['render_depth_weight']
        self.writer = SummaryWriter(os.path.join(exp_args['exp_path'], 'tb'))
        self.step = 0

    def compute_loss(self, batch, pred_up, pred_down):
        gt_up = batch['boundary'][:, 0:1, ...]
        gt_down = batch['boundary'][:, 1:2, ...]
        ratio = batch['ratio']

        # Lift the predicted/ground-truth boundaries to horizontal depth
        gt_depth = self.equi_grid.lonlat_to_depth(gt_up, self.camera_height * ratio)
        pred_depth = self.equi_grid.lonlat_to_depth(pred_up, self.camera_height * ratio)
        loss_plane = F.l1_loss(pred_depth, gt_depth)

        loss_down = F.l1_loss(pred_down, gt_down)
        loss = self.plane_w * loss_plane + loss_down
        if self.render_w > 0:
            gt_render = self.render(gt_depth)
            pred_render = self.render(pred_depth)
            loss_render = F.l1_loss(pred_render, gt_render)
            loss = loss + self.render_w * loss_render
        else:
            loss_render = torch.zeros_like(loss)
        return loss, {'plane': loss_plane.item(), 'down': loss_down.item(), 'render': loss_render.item()}

    def train_epoch(self, epoch, loader):
        self.model.train()
        pbar = tqdm(loader, desc='Epoch %d' % epoch, dynamic_ncols=True)
        for batch in pbar:
            for key, val in batch.items():
                if torch.is_tensor(val):
                    batch[key] = val.to(self.device, non_blocking=True)
            pred_up, pred_down = self.model(batch['rgb'])
            loss, info = self.compute_loss(batch, pred_up, pred_down)
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            self.step += 1
            if self.step % 20 == 0:
                for k, v in info.items():
                    self.writer.add_scalar('train/%s' % k, v, self.step)
            pbar.set_postfix(loss='%.4f' % loss.item())
        self.scheduler.step()

    @torch.no_grad()
    def validate(self, epoch, dataset, loader):
        self.model.eval()
        meter = LED2Net.Metric.IoUMeter(self.camera_height)
        for batch in tqdm(loader, desc='Val %d' % epoch, dynamic_ncols=True):
            for key, val in batch.items():
                if torch.is_tensor(val):
                    batch[key] = val.to(self.device)
            pred_up, pred_down = self.model(batch['rgb'])
            meter.update(pred_up.cpu().numpy(), pred_down.cpu().numpy(),
                         batch['pts_lst'], batch['ratio'].cpu().numpy())
        results = meter.summary()
        for k, v in results.items():
            self.writer.add_scalar('val/%s' % k, v, epoch)
        print('[Epoch %d] 2D IoU: %.4f  3D IoU: %.4f' % (epoch, results['2DIoU'], results['3DIoU']))
        return results

    def save(self, epoch, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        state = {
            'epoch': epoch,
            'model': self.net.state_dict(),
            'optim': self.optim.state_dict(),
            'scheduler': self.scheduler.state_dict(),
        }
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path, map_location=self.device)
        self.net.load_state_dict(state['model'])
        self.optim.load_state_dict(state['optim'])
        self.scheduler.load_state_dict(state['scheduler'])
        return state['epoch']


def main():
    args = parse_args()
    with open(args.config, 'r') as f:
        config = yaml.load(f, Loader=yaml.FullLoader)
    exp_args = config['exp_args']
    set_seed(exp_args['seed'])
    device = torch.device(exp_args['device'])
    torch.backends.cudnn.benchmark = True

    os.makedirs(exp_args['exp_path'], exist_ok=True)
    with open(os.path.join(exp_args['exp_path'], 'config.yaml'), 'w') as f:
        yaml.dump(config, f)

    trainer = Trainer(config, device)
    start_epoch = 0
    ckpt_path = os.path.join(exp_args['exp_path'], 'latest.pkl')
    if args.resume and os.path.isfile(ckpt_path):
        start_epoch = trainer.load(ckpt_path) + 1
        print('Resume from epoch %d' % start_epoch)

    val_dataset, val_loader = build_loader(config['dataset_args'], 'val')
    if args.mode == 'val':
        trainer.validate(start_epoch, val_dataset, val_loader)
        return

    train_dataset, train_loader = build_loader(config['dataset_args'], 'train')
    best_iou = 0
    for epoch in range(start_epoch, exp_args['epochs']):
        trainer.train_epoch(epoch, train_loader)
        results = trainer.validate(epoch, val_dataset, val_loader)
        trainer.save(epoch, ckpt_path)
        if results['3DIoU'] > best_iou:
            best_iou = results['3DIoU']
            trainer.save(epoch, os.path.join(exp_args['exp_path'], 'best.pkl'))
        if (epoch + 1) % exp_args['exp_freq'] == 0:
            trainer.save(epoch, os.path.join(exp_args['exp_path'], 'epoch_%03d.pkl' % epoch))


if __name__ == '__main__':
    main()
