"""Train ACM-FPN / ACM-UNet (Asymmetric Contextual Modulation) on SIRST.

PyTorch port of the original MXNet/Gluon training script.
"""
import os
import os.path as osp
import time
import argparse
import numpy as np
from tqdm import tqdm

import torch
import torch.nn as nn
import torch.utils.data as Data
import torchvision.transforms as transforms
from torch.utils.tensorboard import SummaryWriter

from model.segmentation import ASKCResNetFPN, ASKCResUNet
from utils.data import SirstDataset
from utils.metrics import SigmoidMetric, SamplewiseSigmoidMetric
from utils.loss import SoftLoss
from utils.lr_scheduler import LR_Scheduler


def parse_args():
    parser = argparse.ArgumentParser(description='ACM training with PyTorch')
    # model
    parser.add_argument('--net-choice', type=str, default='ACM-FPN', help='ACM-FPN or ACM-UNet')
    parser.add_argument('--blocks', type=int, default=4, help='block num in each stage')
    parser.add_argument('--channels', type=int, default=16, help='base channels')
    parser.add_argument('--fuse-mode', type=str, default='AsymBi', help='AsymBi, BiLocal, BiGlobal')
    # dataset
    parser.add_argument('--dataset', type=str, default='sirst', help='dataset name')
    parser.add_argument('--base-size', type=int, default=512, help='base image size')
    parser.add_argument('--crop-size', type=int, default=480, help='crop image size')
    parser.add_argument('--workers', type=int, default=4, metavar='N', help='dataloader threads')
    # training
    parser.add_argument('--epochs', type=int, default=300, help='number of epochs')
    parser.add_argument('--batch-size', type=int, default=8, help='batch size for training')
    parser.add_argument('--test-batch-size', type=int, default=8, help='batch size for testing')
    parser.add_argument('--lr', type=float, default=0.05, help='learning rate')
    parser.add_argument('--momentum', type=float, default=0.9, help='momentum')
    parser.add_argument('--weight-decay', type=float, default=1e-4, help='weight decay')
    parser.add_argument('--warm-up-epochs', type=int, default=0, help='warm up epochs')
    # devices
    parser.add_argument('--gpus', type=str, default='0', help='Training with GPUs, e.g. 0,1,2')
    parser.add_argument('--no-cuda', action='store_true', default=False, help='disables CUDA training')
    # checkpoint / logging
    parser.add_argument('--save-dir', type=str, default='./params', help='where to save checkpoints')
    parser.add_argument('--log-dir', type=str, default='./runs', help='tensorboard log dir')
    parser.add_argument('--resume', type=str, default=None, help='resume checkpoint path')
    parser.add_argument('--seed', type=int, default=1, help='random seed')

    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    return args


class Trainer(object):
    def __init__(self, args):
        self.args = args
        os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus
        self.device = torch.device('cuda' if args.cuda else 'cpu')

        ## dataset
        trans = transforms.Compose([
            transforms.ToTensor(),
            transforms.Normalize([.485, .456, .406], [.229, .224, .225]),
        ])
        trainset = SirstDataset(args, mode='train', transform=trans)
        valset = SirstDataset(args, mode='val', transform=trans)
        self.train_data_loader = Data.DataLoader(trainset, batch_size=args.batch_size, shuffle=True,
                                                 num_workers=args.workers, pin_memory=True, drop_last=True)
        self.val_data_loader = Data.DataLoader(valset, batch_size=args.test_batch_size,
                                               num_workers=args.workers, pin_memory=True)

        ## model
        layer_blocks = [args.blocks] * 3
        channels = [8, args.channels, args.channels * 2, args.channels * 4]
        if args.net_choice == 'ACM-FPN':
            net = ASKCResNetFPN(layer_blocks, channels, fuse_mode=args.fuse_mode)
        elif args.net_choice == 'ACM-UNet':
            net = ASKCResUNet(layer_blocks, channels, fuse_mode=args.fuse_mode)
        else:
            raise NotImplementedError(args.net_choice)
        net.apply(self.weight_init)

        if args.cuda and len(args.gpus.split(',')) > 1:
            print('Using %d GPUs' % torch.cuda.device_count())
            net = nn.DataParallel(net)
        self.net = net.to(self.device)

        ## criterion / optimizer
        self.criterion = SoftLoss()
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=args.lr, momentum=args.momentum,
                                         weight_decay=args.weight_decay)
        self.scheduler = LR_Scheduler('poly', args.lr, args.epochs, len(self.train_data_loader),
                                      warmup_epochs=args.warm_up_epochs)

        ## evaluation metrics
        self.iou_metric = SigmoidMetric()
        self.nIoU_metric = SamplewiseSigmoidMetric(1, score_thresh=0.5)
        self.best_iou = 0
        self.best_nIoU = 0
        self.start_epoch = 0

        if args.resume is not None and osp.isfile(args.resume):
            checkpoint = torch.load(args.resume)
            self.start_epoch = checkpoint['epoch']
            self.best_iou = checkpoint.get('best_iou', 0)
            state = checkpoint['state_dict']
            if isinstance(self.net, nn.DataParallel):
                self.net.module.load_state_dict(state)
            else:
                self.net.load_state_dict(state)
            print("=> loaded checkpoint '{}' (epoch {})".format(args.resume, checkpoint['epoch']))

        ## folders
        folder_name = '%s_%s_%s' % (time.strftime('%Y-%m-%d-%H-%M-%S', time.localtime(time.time())),
                                    args.net_choice, args.fuse_mode)
        self.save_folder = osp.join(args.save_dir, folder_name)
        os.makedirs(self.save_folder, exist_ok=True)
        self.writer = SummaryWriter(log_dir=osp.join(args.log_dir, folder_name))
        self.writer.add_text(folder_name, 'Args:%s, ' % args)

    def training(self, epoch):
        # training step
        losses = []
        self.net.train()
        tbar = tqdm(self.train_data_loader)
        for i, (data, labels) in enumerate(tbar):
            self.scheduler(self.optimizer, i, epoch, self.best_iou)
            data = data.to(self.device, non_blocking=True)
            labels = labels.to(self.device, non_blocking=True)

            output = self.net(data)
            loss = self.criterion(output, labels)

            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

            losses.append(loss.item())
            tbar.set_description('Epoch:%3d, lr:%f, train loss:%f'
                                 % (epoch, self.optimizer.param_groups[0]['lr'], np.mean(losses)))
        self.writer.add_scalar('Losses/train loss', np.mean(losses), epoch)
        self.writer.add_scalar('Learning rate/', self.optimizer.param_groups[0]['lr'], epoch)

    def validation(self, epoch):
        self.iou_metric.reset()
        self.nIoU_metric.reset()

        eval_losses = []
        self.net.eval()
        tbar = tqdm(self.val_data_loader)
        with torch.no_grad():
            for i, (data, labels) in enumerate(tbar):
                data = data.to(self.device)
                labels = labels.to(self.device)
                output = self.net(data)
                loss = self.criterion(output, labels)
                eval_losses.append(loss.item())

                self.iou_metric.update(output, labels)
                self.nIoU_metric.update(output, labels)
                _, IoU = self.iou_metric.get()
                _, nIoU = self.nIoU_metric.get()

                tbar.set_description('  Epoch:%3d, eval loss:%f, IoU:%f, nIoU:%f'
                                     % (epoch, np.mean(eval_losses), IoU, nIoU))

        torch.cuda.empty_cache()

        pkl_name = 'Epoch-%3d_IoU-%.4f_nIoU-%.4f.pkl' % (epoch, IoU, nIoU)
        state = self.net.module.state_dict() if isinstance(self.net, nn.DataParallel) else self.net.state_dict()
        if IoU > self.best_iou:
            torch.save({'epoch': epoch, 'state_dict': state, 'best_iou': IoU},
                       osp.join(self.save_folder, pkl_name))
            self.best_iou = IoU
        if nIoU > self.best_nIoU:
            torch.save({'epoch': epoch, 'state_dict': state, 'best_iou': self.best_iou},
                       osp.join(self.save_folder, pkl_name))
            self.best_nIoU = nIoU

        self.writer.add_scalar('Losses/eval_loss', np.mean(eval_losses), epoch)
        self.writer.add_scalar('Eval/IoU', IoU, epoch)
        self.writer.add_scalar('Eval/nIoU', nIoU, epoch)
        self.writer.add_scalar('Best/IoU', self.best_iou, epoch)
        self.writer.add_scalar('Best/nIoU', self.best_nIoU, epoch)

    @staticmethod
    def weight_init(m):
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)


if __name__ == '__main__':
    args = parse_args()
    print(args)

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if args.cuda:
        torch.cuda.manual_seed(args.seed)
        torch.backends.cudnn.benchmark = True

    trainer = Trainer(args)
    print('Starting Epoch:', trainer.start_epoch)
    print('Total Epoches:', args.epochs)
    for epoch in range(trainer.start_epoch, args.epochs):
        trainer.training(epoch)
        trainer.validation(epoch)

    print('Best IoU: %.5f, best nIoU: %.5f' % (trainer.best_iou, trainer.best_nIoU))
