import os
import time
import argparse
import numpy as np
from tqdm import tqdm

import torch
import torch.nn as nn
import torch.distributed as dist
import torch.utils.data as Data
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler

from model.ISNet import ISNet
from utils.data import IRSTD1kDataset
from utils.loss import SoftIoULoss, EdgeBCELoss
from utils.metric import SigmoidMetric, SamplewiseSigmoidMetric, PD_FA
from utils.lr_scheduler import adjust_learning_rate


def parse_args():
    parser = argparse.ArgumentParser(description='Implement of ISNet (CVPR 2022)')

    # dataset
    parser.add_argument('--dataset-dir', type=str, default='./datasets/IRSTD-1k')
    parser.add_argument('--base-size', type=int, default=512)
    parser.add_argument('--crop-size', type=int, default=480)

    # training
    parser.add_argument('--batch-size', type=int, default=4, help='per-GPU batch size')
    parser.add_argument('--epochs', type=int, default=400)
    parser.add_argument('--lr', type=float, default=0.05)
    parser.add_argument('--warm-up-epochs', type=int, default=0)
    parser.add_argument('--num-workers', type=int, default=8)
    parser.add_argument('--edge-weight', type=float, default=10.0, help='weight of the edge loss')

    # net
    parser.add_argument('--channels', type=int, nargs='+', default=[8, 16, 32, 64])
    parser.add_argument('--layers', type=int, nargs='+', default=[4, 4, 4])

    # distributed / device
    parser.add_argument('--local_rank', type=int, default=int(os.environ.get('LOCAL_RANK', 0)))
    parser.add_argument('--device', type=str, default='cuda', help='cuda or cpu')
    parser.add_argument('--amp', action='store_true', help='mixed precision training')

    # checkpoint
    parser.add_argument('--save-iter-step', type=int, default=10)
    parser.add_argument('--log-per-iter', type=int, default=10)
    parser.add_argument('--resume', type=str, default='')
    args = parser.parse_args()
    return args


def is_main_process():
    return not dist.is_available() or not dist.is_initialized() or dist.get_rank() == 0


def reduce_tensor(t):
    rt = t.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= dist.get_world_size()
    return rt


class Trainer(object):
    def __init__(self, args):
        self.args = args

        ## distributed
        self.distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
        if self.distributed:
            torch.cuda.set_device(args.local_rank)
            dist.init_process_group(backend='nccl', init_method='env://')
            self.device = torch.device(f'cuda:{args.local_rank}')
        else:
            self.device = torch.device(args.device if torch.cuda.is_available() else 'cpu')

        ## dataset
        trainset = IRSTD1kDataset(args, mode='train')
        valset = IRSTD1kDataset(args, mode='val')
        self.train_sampler = DistributedSampler(trainset) if self.distributed else None
        self.train_data_loader = Data.DataLoader(trainset, batch_size=args.batch_size,
                                                 shuffle=(self.train_sampler is None),
                                                 sampler=self.train_sampler,
                                                 num_workers=args.num_workers, pin_memory=True,
                                                 drop_last=True)
        self.val_data_loader = Data.DataLoader(valset, batch_size=1, num_workers=args.num_workers)

        ## model
        net = ISNet(layer_blocks=args.layers, channels=args.channels)
        if self.distributed:
            net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
        net = net.to(self.device)
        if self.distributed:
            net = DDP(net, device_ids=[args.local_rank], output_device=args.local_rank,
                      find_unused_parameters=True)
        self.net = net

        ## criterion
        self.softiou = SoftIoULoss()
        self.edge_loss = EdgeBCELoss()

        ## lr scheduler / optimizer
        self.optimizer = torch.optim.Adagrad(self.net.parameters(), lr=args.lr, weight_decay=1e-4)
        self.scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

        ## evaluation metrics
        self.iou_metric = SigmoidMetric()
        self.nIoU_metric = SamplewiseSigmoidMetric(1, score_thresh=0.5)
        self.PD_FA = PD_FA(1, 1)
        self.best_iou = 0
        self.best_nIoU = 0
        self.start_epoch = 0

        if args.resume:
            ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
            (self.net.module if self.distributed else self.net).load_state_dict(ckpt['net'])
            self.optimizer.load_state_dict(ckpt['optimizer'])
            self.start_epoch = ckpt['epoch'] + 1

        ## folders
        folder_name = '%s_ISNet' % time.strftime('%Y-%m-%d-%H-%M-%S', time.localtime(time.time()))
        self.save_folder = os.path.join('result/', folder_name)
        if is_main_process():
            os.makedirs(self.save_folder, exist_ok=True)
            n_params = sum(p.numel() for p in self.net.parameters()) / 1e6
            print('#params: %.3fM' % n_params)
            if torch.cuda.is_available():
                print('Training on %d x %s' % (max(1, int(os.environ.get('WORLD_SIZE', 1))),
                                               torch.cuda.get_device_name(self.device)))

    def training(self, epoch):
        if self.train_sampler is not None:
            self.train_sampler.set_epoch(epoch)
        losses, losses_edge = [], []
        self.net.train()
        tbar = tqdm(self.train_data_loader) if is_main_process() else self.train_data_loader
        for i, (data, labels, edge, grad) in enumerate(tbar):
            data = data.to(self.device, non_blocking=True)
            labels = labels.to(self.device, non_blocking=True)
            edge = edge.to(self.device, non_blocking=True)
            grad = grad.to(self.device, non_blocking=True)

            with torch.cuda.amp.autocast(enabled=self.args.amp):
                output, edge_out = self.net(data, grad)
                loss_img = self.softiou(output, labels)
                loss_edge = self.args.edge_weight * self.edge_loss(edge_out, edge)
                loss = loss_img + loss_edge

            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

            if self.distributed:
                loss_img = reduce_tensor(loss_img.detach())
                loss_edge = reduce_tensor(loss_edge.detach())
            losses.append(loss_img.item())
            losses_edge.append(loss_edge.item())
            if is_main_process():
                tbar.set_description('Epoch:%3d, lr:%f, train loss:%f, edge loss:%f'
                                     % (epoch, self.optimizer.param_groups[0]['lr'],
                                        np.mean(losses), np.mean(losses_edge)))

        adjust_learning_rate(self.optimizer, epoch, self.args.epochs, self.args.lr,
                             self.args.warm_up_epochs, 1e-6)

    def validation(self, epoch):
        if not is_main_process():
            if self.distributed:
                dist.barrier()
            return
        self.iou_metric.reset()
        self.nIoU_metric.reset()
        self.PD_FA.reset()
        eval_losses = []
        net = self.net.module if self.distributed else self.net
        net.eval()
        tbar = tqdm(self.val_data_loader)
        for i, (data, labels, edge, grad) in enumerate(tbar):
            with torch.no_grad():
                output, _ = net(data.to(self.device), grad.to(self.device))
            labels = labels.to(self.device)
            loss = self.softiou(output, labels)
            eval_losses.append(loss.item())

            self.iou_metric.update(output, labels)
            self.nIoU_metric.update(output, labels)
            self.PD_FA.update(output, labels)
            _, IoU = self.iou_metric.get()
            _, nIoU = self.nIoU_metric.get()
            tbar.set_description('  Epoch:%3d, eval loss:%f, IoU:%f, nIoU:%f'
                                 % (epoch, np.mean(eval_losses), IoU, nIoU))
        FA, PD = self.PD_FA.get(len(self.val_data_loader))

        peak_mem = torch.cuda.max_memory_allocated() / 1024 ** 3
        print('peak GPU memory: %.2f GB' % peak_mem)

        pkl_name = 'Epoch-%3d_IoU-%.4f_nIoU-%.4f.pth' % (epoch, IoU, nIoU)
        if IoU > self.best_iou or nIoU > self.best_nIoU:
            torch.save({'net': net.state_dict(), 'optimizer': self.optimizer.state_dict(), 'epoch': epoch},
                       os.path.join(self.save_folder, pkl_name))
        self.best_iou = max(IoU, self.best_iou)
        self.best_nIoU = max(nIoU, self.best_nIoU)
        with open(os.path.join(self.save_folder, 'metric.log'), 'a') as f:
            f.write('{} - {:04d}\t - IoU {:.4f}\t - nIoU {:.4f}\t - PD {:.4f}\t - FA {:.4f}\n'.format(
                time.strftime('%Y-%m-%d-%H-%M-%S', time.localtime(time.time())),
                epoch, IoU, nIoU, PD[0], FA[0] * 1000000))
        if self.distributed:
            dist.barrier()


if __name__ == '__main__':
    args = parse_args()

    torch.manual_seed(42)
    torch.cuda.manual_seed_all(42)
    torch.backends.cudnn.benchmark = True

    trainer = Trainer(args)
    for epoch in range(trainer.start_epoch, args.epochs):
        trainer.training(epoch)
        trainer.validation(epoch)

    if is_main_process():
        print('Best IoU: %.5f, best nIoU: %.5f' % (trainer.best_iou, trainer.best_nIoU))
    if trainer.distributed:
        dist.destroy_process_group()
