import os
import os.path as osp
import time
import shutil

import torch
import torch.nn as nn

from .visualizations import VisdomVisualizer
from .meters import AverageMeter


class NetworkManager(object):
    '''
    Generic train / validate / test loop. Subclasses implement the
    task-specific pieces (forward_pass, compute_loss, compute_eval_metrics...).
    '''

    def __init__(self,
                 network,
                 name='',
                 train_dataloader=None,
                 val_dataloader=None,
                 test_dataloader=None,
                 criterion=None,
                 optimizer=None,
                 scheduler=None,
                 num_epochs=20,
                 validation_freq=1,
                 visualization_freq=5,
                 evaluation_sample_freq=-1,
                 device=None,
                 count_epochs=False,
                 checkpoint_root='./',
                 visdom=None):

        # Name of this experiment
        self.name = name

        # Class instances
        self.network = network
        self.criterion = criterion
        self.optimizer = optimizer
        self.scheduler = scheduler

        # Dataloaders
        self.train_dataloader = train_dataloader
        self.val_dataloader = val_dataloader
        self.test_dataloader = test_dataloader

        # Training options
        self.num_epochs = num_epochs
        self.validation_freq = validation_freq
        self.visualization_freq = visualization_freq
        self.evaluation_sample_freq = evaluation_sample_freq
        self.count_epochs = count_epochs

        # CUDA info
        if device is None:
            self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        else:
            self.device = device
        self.network = self.network.to(self.device)

        # Some timers
        self.batch_time_meter = AverageMeter()
        self.forward_time_meter = AverageMeter()
        self.backward_time_meter = AverageMeter()

        # Some trackers
        self.epoch = 0
        self.best_val_metric = 0.0

        # Directory to store checkpoints
        self.checkpoint_dir = osp.join(checkpoint_root, name)
        os.makedirs(self.checkpoint_dir, exist_ok=True)

        # Visdom visualizer
        self.vis = VisdomVisualizer(name, **visdom) if visdom is not None else None

    def forward_pass(self, inputs):
        raise NotImplementedError

    def compute_loss(self, output, gt):
        raise NotImplementedError

    def compute_eval_metrics(self, output, gt):
        raise NotImplementedError

    def reset_eval_metrics(self):
        raise NotImplementedError

    def compute_labeled_iou(self):
        raise NotImplementedError

    def parse_data(self, data):
        # Default: the first element is the input, the last is the ground truth
        inputs = [d.to(self.device, non_blocking=True) for d in data[:-1]]
        gt = data[-1].to(self.device, non_blocking=True)
        return inputs, gt

    def train(self, checkpoint_path=None, weights_only=False):
        print('Starting training')

        # Load pretrained parameters if desired
        if checkpoint_path is not None:
            self.load_checkpoint(checkpoint_path, weights_only)
            if weights_only:
                self.initialize_visualizations()
        else:
            self.initialize_visualizations()

        for self.epoch in range(self.epoch, self.num_epochs):
            self.train_one_epoch()

            if (self.epoch + 1) % self.validation_freq == 0:
                self.validate()
                self.save_checkpoint(self.best_val_metric_updated)

            if self.scheduler is not None:
                self.scheduler.step()

    def train_one_epoch(self):
        self.network.train()
        self.batch_time_meter.reset()
        self.forward_time_meter.reset()
        self.backward_time_meter.reset()
        end = time.time()

        for batch_num, data in enumerate(self.train_dataloader):
            inputs, gt = self.parse_data(data)

            s = time.time()
            output = self.forward_pass(inputs)
            torch.cuda.synchronize()
            self.forward_time_meter.update(time.time() - s)

            loss = self.compute_loss(output, gt)

            s = time.time()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.backward_time_meter.update(time.time() - s)

            self.batch_time_meter.update(time.time() - end)
            end = time.time()

            if batch_num % self.visualization_freq == 0:
                self.print_batch_report(batch_num, loss)
                if self.vis is not None:
                    self.vis.plot_loss(loss.item(), self.epoch, batch_num, len(self.train_dataloader))

    def validate(self):
        print('Validating model....')
        self.network.eval()
        self.reset_eval_metrics()
        with torch.no_grad():
            for batch_num, data in enumerate(self.val_dataloader):
                inputs, gt = self.parse_data(data)
                output = self.forward_pass(inputs)
                self.compute_eval_metrics(output, gt)
        torch.cuda.empty_cache()

        val_metric = self.compute_labeled_iou()
        self.best_val_metric_updated = val_metric > self.best_val_metric
        if self.best_val_metric_updated:
            self.best_val_metric = val_metric
        print('Epoch {} validation mIOU: {:.4f} (best {:.4f})'.format(
            self.epoch + 1, val_metric, self.best_val_metric))

    def print_batch_report(self, batch_num, loss):
        print('Epoch: [{0}][{1}/{2}]\t'
              'Batch Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
              'Forward Time {forward_time.val:.3f} ({forward_time.avg:.3f})\t'
              'Backward Time {backward_time.val:.3f} ({backward_time.avg:.3f})\t'
              'Loss {loss:.4f}'.format(
                  self.epoch + 1, batch_num + 1, len(self.train_dataloader),
                  batch_time=self.batch_time_meter,
                  forward_time=self.forward_time_meter,
                  backward_time=self.backward_time_meter,
                  loss=loss.item()))

    def save_checkpoint(self, is_best):
        checkpoint_path = osp.join(self.checkpoint_dir, 'checkpoint_latest.pth')
        torch.save({
            'epoch': self.epoch + 1,
            'experiment': self.name,
            'state_dict': self.network.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'best_val_metric': self.best_val_metric,
        }, checkpoint_path)
        if is_best:
            shutil.copyfile(checkpoint_path, osp.join(self.checkpoint_dir, 'model_best.pth'))

    def load_checkpoint(self, checkpoint_path=None, weights_only=False, eval_mode=False):
        if checkpoint_path is not None:
            checkpoint = torch.load(checkpoint_path)
            util_load_state_dict(self.network, checkpoint['state_dict'])
            if not weights_only:
                self.epoch = checkpoint['epoch']
                self.best_val_metric = checkpoint['best_val_metric']
                self.optimizer.load_state_dict(checkpoint['optimizer'])
            print('Loaded model weights from {}'.format(checkpoint_path))
        if eval_mode:
            self.network.eval()

    def initialize_visualizations(self):
        if self.vis is not None:
            self.vis.reset()


def util_load_state_dict(network, state_dict):
    # Strip the DataParallel prefix if the weights were saved from a wrapped net
    state_dict = {k[7:] if k.startswith('module.') else k: v for k, v in state_dict.items()}
    network.load_state_dict(state_dict, strict=False)
