import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
import torch.optim as optim
import torch.optim.lr_scheduler as sched

import argparse
import os
import sys
import pickle
import numpy as np
import pandas as pd
from datetime import datetime
from math import sqrt, inf, ceil
from time import perf_counter

import logging
logger = logging.getLogger(__name__)

from .utils import gpu_memory_summary, all_reduce_mean


class Trainer:
    """
    Class to train network. Includes checkpoints, optimizer, scheduler,
    """
    def __init__(self, args, dataloaders, model, loss_fn, metrics_fn, minibatch_metrics_fn, minibatch_metrics_string_fn,
                 optimizer, scheduler, restart_epochs, summarize_csv, summarize, summarize_now, device_id, device, dtype):
        np.set_printoptions(precision=5)
        self.args = args
        self.dataloaders = dataloaders
        self.model = model
        self.loss_fn = loss_fn
        self.metrics_fn = metrics_fn
        self.minibatch_metrics_fn = minibatch_metrics_fn
        self.minibatch_metrics_string_fn = minibatch_metrics_string_fn
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.restart_epochs = restart_epochs

        self.summarize_csv = summarize_csv
        self.summarize = summarize
        self.summarize_now = summarize_now
        if summarize:
            from torch.utils.tensorboard import SummaryWriter
            self.summarize = SummaryWriter(log_dir=args.logdir + args.prefix + '/tensorboard')

        self.epoch = 0
        self.minibatch = 0
        self.best_epoch = 0
        self.best_metrics = {'loss': inf}

        self.device_id = device_id
        self.device = device
        self.dtype = dtype

        self.scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    def _save_checkpoint(self, valid_metrics=None):
        if not self.args.save:
            return
        if self.device_id > 0:
            # only the primary rank writes checkpoints
            return

        model = self.model.module if hasattr(self.model, 'module') else self.model
        save_dict = {'args': self.args,
                     'model_state': model.state_dict(),
                     'optimizer_state': self.optimizer.state_dict(),
                     'scheduler_state': self.scheduler.state_dict(),
                     'epoch': self.epoch,
                     'minibatch': self.minibatch,
                     'best_epoch': self.best_epoch,
                     'best_metrics': self.best_metrics}

        if (valid_metrics is None):
            logger.info('Saving model to checkpoint file: {}'.format(self.args.checkfile))
            torch.save(save_dict, self.args.checkfile)
        elif (self.args.target == 'is_signal' and valid_metrics['loss'] < self.best_metrics['loss']):
            self.best_epoch = self.epoch
            self.best_metrics = save_dict['best_metrics'] = valid_metrics
            logger.info('Lowest loss achieved! Saving best result to file: {}'.format(self.args.bestfile))
            torch.save(save_dict, self.args.bestfile)
        else:
            logger.info('Current loss: {} | Best loss: {}'.format(valid_metrics['loss'], self.best_metrics['loss']))

    def load_checkpoint(self):
        """
        Load checkpoint from previous file.
        """
        if not self.args.load:
            return
        elif os.path.exists(self.args.checkfile):
            logger.info('Loading previous model from checkpoint!')
            self.load_state(self.args.checkfile)
            self.epoch += 1
        else:
            logger.info('No checkpoint included! Starting fresh training program.')
            return

    def load_state(self, checkfile):
        logger.info('Loading from checkpoint!')

        # checkpoints are written by rank 0 from cuda:0; remap onto this process' GPU
        if self.device_id >= 0:
            map_location = {'cuda:0': 'cuda:%d' % self.device_id}
        else:
            map_location = self.device
        checkpoint = torch.load(checkfile, map_location=map_location)
        model = self.model.module if hasattr(self.model, 'module') else self.model
        model.load_state_dict(checkpoint['model_state'])
        self.optimizer.load_state_dict(checkpoint['optimizer_state'])
        self.scheduler.load_state_dict(checkpoint['scheduler_state'])
        self.epoch = checkpoint['epoch']
        self.best_epoch = checkpoint['best_epoch']
        self.best_metrics = checkpoint['best_metrics']
        self.minibatch = checkpoint['minibatch']

        logger.info(f'Loaded checkpoint at epoch {self.epoch}.\nBest metrics from checkpoint are at epoch {self.best_epoch}:\n{self.best_metrics}')

    def evaluate(self, splits=['train', 'valid', 'test'], best=True, final=True, distributed=False):
        """
        Evaluate model on training/validation/testing splits.

        :splits: List of splits to include. Only valid splits are: 'train', 'valid', 'test'
        :best: Evaluate best model as determined by minimum validation error over evolution
        :final: Evaluate final model at end of training phase
        """
        if not self.args.save:
            logger.info('No model saved! Cannot give final status.')
            return

        # Evaluate final model (at end of training)
        if final:
            logger.info('Getting predictions for model in last checkpoint.')

            # Load checkpoint model to make predictions
            if os.path.exists(self.args.checkfile):
                self.load_state(self.args.checkfile)

            # Loop over splits, predict, and output/log predictions
            for split in splits:
                predict, targets = self.predict(split)
                if distributed:
                    predict, targets = self._gather(predict), self._gather(targets)
                if self.device_id <= 0:
                    self.log_predict(predict, targets, split, description='Final')

        # Evaluate best model as determined by validation error
        if best:
            # Load best model to make predictions
            if os.path.exists(self.args.bestfile):
                self.load_state(self.args.bestfile)
            logger.info(f'Getting predictions for best model (epoch {self.best_epoch}, loaded from {self.args.bestfile}).')
            # Loop over splits, predict, and output/log predictions
            for split in splits:
                predict, targets = self.predict(split)
                if distributed:
                    predict, targets = self._gather(predict), self._gather(targets)
                if self.device_id <= 0:
                    self.log_predict(predict, targets, split, description='Best')

        logger.info('Inference phase complete!')

    def _gather(self, tensor):
        world_size = dist.get_world_size()
        tensor = tensor.to(self.device)
        out = [torch.empty_like(tensor) for _ in range(world_size)]
        dist.all_gather(out, tensor)
        return torch.cat(out).cpu()

    def _warm_restart(self, epoch):
        restart_epochs = self.restart_epochs
        if epoch in restart_epochs:
            logger.info('Warm learning rate restart at epoch {}!'.format(epoch))
            self.scheduler.last_epoch = 0
            idx = restart_epochs.index(epoch)
            self.scheduler.T_max = restart_epochs[idx + 1] - restart_epochs[idx]
            if self.args.lr_minibatch:
                self.scheduler.T_max *= ceil(self.args.num_train / (self.args.batch_size * dist.get_world_size() if dist.is_initialized() else 1))
            self.scheduler.step(0)

    def _log_minibatch(self, batch_idx, loss, targets, predict, batch_metrics, epoch_t, batch_t):
        mini_batch_loss = loss.item()
        minibatch_metrics = self.minibatch_metrics_fn(predict, targets, mini_batch_loss)

        if batch_idx == 0:
            self.minibatch_metrics = minibatch_metrics
        else:
            """
            Exponential average of recent Loss/AltLoss on training set for more convenient logging.
            alpha here controls the effective number of batches in the running average
            """
            alpha = self.args.alpha
            assert 0 <= alpha < 1
            self.minibatch_metrics = [alpha * mini + (1 - alpha) * mini_batch for mini, mini_batch in zip(self.minibatch_metrics, minibatch_metrics)]

        dtb = (perf_counter() - batch_t)
        tepoch = (perf_counter() - epoch_t)

        if self.summarize_csv == 'all':
            batch_metrics.append([self.epoch, batch_idx, dtb] + [m.item() if torch.is_tensor(m) else m for m in minibatch_metrics])

        if batch_idx % self.args.log_every == 0:
            logstring = self.args.prefix + ' E:{:3}/{}, B: {:5}/{}'.format(self.epoch, self.args.num_epoch, batch_idx + 1, len(self.dataloaders['train']))
            logstring += self.minibatch_metrics_string_fn(self.minibatch_metrics)
            logstring += '  dt:{:> 6.2f}{:> 8.2f}{:> 8.2f}'.format(dtb, tepoch, tepoch / (batch_idx + 1) * len(self.dataloaders['train']))
            if self.device_id <= 0:
                logger.info(logstring)

    def train(self):
        epoch0 = self.epoch
        for epoch in range(epoch0, self.args.num_epoch):
            self.epoch = epoch
            epoch_time = datetime.now()
            logger.info('Starting Epoch: {}'.format(epoch))

            self._warm_restart(epoch)
            if hasattr(self.dataloaders['train'].sampler, 'set_epoch'):
                self.dataloaders['train'].sampler.set_epoch(epoch)

            train_predict, train_targets, epoch_t = self.train_epoch()
            valid_predict, valid_targets = self.predict(set='valid')

            train_metrics, train_string = self.metrics_fn(train_predict, train_targets, self.loss_fn, self.args.prefix, logger)
            valid_metrics, valid_string = self.metrics_fn(valid_predict, valid_targets, self.loss_fn, self.args.prefix, logger)

            self._save_checkpoint(valid_metrics)

            logger.info(f'Epoch {epoch} complete!')
            logger.info(f'Training:   {train_string}')
            logger.info(f'Validation: {valid_string}')
            logger.info('Epoch time: {} {}'.format(datetime.now() - epoch_time, gpu_memory_summary(self.device)))

            if self.summarize:
                for name, metric in train_metrics.items():
                    self.summarize.add_scalar('train/' + name, metric, self.epoch)
                for name, metric in valid_metrics.items():
                    self.summarize.add_scalar('valid/' + name, metric, self.epoch)

            torch.cuda.empty_cache()

    def _get_target(self, data):
        """
        Get the learning target.
        """
        targets = data[self.args.target].to(self.device, self.dtype)
        return targets

    def train_epoch(self):
        dataloader = self.dataloaders['train']

        current_idx, num_data_pts = 0, len(dataloader.dataset)
        self.loss_val, self.alt_loss_val, self.batch_time = 0, 0, 0
        all_predict, all_targets = [], []

        self.model.train()
        epoch_t = perf_counter()
        batch_metrics = []

        for batch_idx, data in enumerate(dataloader):
            batch_t = perf_counter()

            # Standard zero-gradient
            self.optimizer.zero_grad()

            # Get targets and predictions
            targets = self._get_target(data)
            with torch.autocast(device_type='cuda', dtype=torch.bfloat16, enabled=self.args.amp):
                predict = self.model(data)['predict']
                # Calculate loss and backprop
                loss = self.loss_fn(predict, targets.argmax(dim=1) if targets.dim() == 2 else targets.long())

            self.scaler.scale(loss).backward()

            # Clip the gradient
            if self.args.clip_grad_norm:
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip_grad_norm)

            # Step optimizer and learning rate
            self.scaler.step(self.optimizer)
            self.scaler.update()
            if self.args.lr_minibatch:
                self.scheduler.step()

            targets, predict = targets.detach().cpu(), predict.detach().cpu()
            all_predict.append(predict)
            all_targets.append(targets)

            self._log_minibatch(batch_idx, loss, targets, predict, batch_metrics, epoch_t, batch_t)

            self.minibatch += 1

        if not self.args.lr_minibatch:
            self.scheduler.step()

        all_predict = torch.cat(all_predict)
        all_targets = torch.cat(all_targets)

        if self.summarize_csv == 'all' and self.device_id <= 0:
            df = pd.DataFrame(batch_metrics)
            df.to_csv(self.args.logdir + self.args.prefix + '_batch_metrics.csv', mode='a', header=not os.path.exists(self.args.logdir + self.args.prefix + '_batch_metrics.csv'))

        return all_predict, all_targets, epoch_t

    def predict(self, set='valid'):
        dataloader = self.dataloaders[set]

        self.model.eval()
        all_predict, all_targets = [], []
        start_time = perf_counter()
        logger.info('Starting testing on {} set: '.format(set))

        for batch_idx, data in enumerate(dataloader):

            targets = self._get_target(data)
            with torch.no_grad():
                predict = self.model(data)['predict'].detach()

            all_targets.append(targets)
            all_predict.append(predict)

        all_predict = torch.cat(all_predict).cpu()
        all_targets = torch.cat(all_targets).cpu()

        torch.cuda.synchronize(self.device)
        dt = perf_counter() - start_time
        logger.info('Total evaluation time: {}s'.format(dt))

        return all_predict, all_targets

    def log_predict(self, predict, targets, dataset, epoch=-1, description='Current'):
        predict = predict.cpu().double()
        targets = targets.cpu().double()

        datastrings = {'train': 'Training', 'test': 'Testing', 'valid': 'Validation'}

        metrics, logstring = self.metrics_fn(predict, targets, self.loss_fn, self.args.prefix, logger)

        if epoch >= 0:
            suffix = 'final'
            logger.info(f'Epoch {epoch} {description} {datastrings[dataset]}' + logstring)
        else:
            suffix = 'best'
            logger.info(f'{description:<5} {datastrings[dataset]:<10}' + logstring)

        if self.args.predict:
            file = self.args.predictfile + '.' + suffix + '.' + dataset + '.pt'
            logger.info('Saving predictions to file: {}'.format(file))
            torch.save({'predict': predict, 'targets': targets}, file)

        return metrics
