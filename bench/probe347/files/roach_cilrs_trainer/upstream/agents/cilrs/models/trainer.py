import logging
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader
import wandb

from .utils.branched_loss import BranchedLoss
from .utils.dataset import get_dataloader

log = logging.getLogger(__name__)


class Trainer():
    """Behaviour-cloning trainer for the CILRS student (Roach, ICCV 2021).

    Trains on the BC dataset collected with the Roach expert, optionally with DAgger iterations.
    Mixed precision (torch.cuda.amp) roughly halves the step time on V100/A100 and is enabled
    with use_amp=True in the agent config.
    """

    def __init__(self, policy,
                 batch_size=256,
                 num_workers=8,
                 learning_rate=0.0002,
                 lr_schedule_step=5,
                 lr_schedule_gamma=0.5,
                 branch_weights=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                 action_weights=[0.5, 0.5],
                 speed_weight=0.05,
                 value_weight=0.0,
                 features_weight=0.0,
                 action_kl=False,
                 action_agg=None,
                 action_mll=None,
                 starting_iteration=0,
                 starting_epoch=0,
                 use_amp=False,
                 im_augmentation=None,
                 device='cuda'):

        self._policy = policy
        self._batch_size = batch_size
        self._num_workers = num_workers
        self._learning_rate = learning_rate
        self._lr_schedule_step = lr_schedule_step
        self._lr_schedule_gamma = lr_schedule_gamma
        self._im_augmentation = im_augmentation
        self._starting_iteration = starting_iteration
        self._starting_epoch = starting_epoch
        self._use_amp = use_amp
        self._device = device

        self._loss = BranchedLoss(branch_weights, action_weights, speed_weight, value_weight, features_weight,
                                  action_kl, action_agg, action_mll)

        self._optimizer = optim.Adam(self._policy.parameters(), lr=self._learning_rate)
        self._scheduler = optim.lr_scheduler.StepLR(self._optimizer, step_size=self._lr_schedule_step,
                                                    gamma=self._lr_schedule_gamma)
        self._scaler = torch.cuda.amp.GradScaler(enabled=self._use_amp)

    def _to_device(self, command, policy_input, supervision):
        command = command.to(self._device)
        policy_input = dict([(k, th_v.to(self._device)) for k, th_v in policy_input.items()])
        supervision = dict([(k, th_v.to(self._device)) for k, th_v in supervision.items()])
        return command, policy_input, supervision

    def _train_one_epoch(self, dataloader, epoch, global_step):
        self._policy = self._policy.train()
        t_epoch_start = time.time()

        for i, (command, policy_input, supervision) in enumerate(dataloader):
            command, policy_input, supervision = self._to_device(command, policy_input, supervision)

            with torch.cuda.amp.autocast(enabled=self._use_amp):
                outputs = self._policy.forward(command, policy_input)
                loss, loss_dict = self._loss.forward(outputs, supervision, command)

            self._optimizer.zero_grad()
            self._scaler.scale(loss).backward()
            self._scaler.unscale_(self._optimizer)
            nn.utils.clip_grad_norm_(self._policy.parameters(), max_norm=10.0)
            self._scaler.step(self._optimizer)
            self._scaler.update()

            global_step += command.shape[0]
            if i % 100 == 0:
                wandb.log({f'train/{k}': v for k, v in loss_dict.items()}, step=global_step)

        t_epoch = time.time() - t_epoch_start
        wandb.log({
            'time/train_epoch': t_epoch,
            'train/lr': self._optimizer.param_groups[0]['lr'],
            'train/gpu_mem_mb': torch.cuda.memory_allocated(self._device) / 2 ** 20,
        }, step=global_step)
        return global_step

    @torch.no_grad()
    def _validate(self, dataloader, global_step):
        self._policy = self._policy.eval()
        losses = []
        for command, policy_input, supervision in dataloader:
            command, policy_input, supervision = self._to_device(command, policy_input, supervision)
            with torch.cuda.amp.autocast(self._use_amp):
                outputs = self._policy.forward(command, policy_input)
                loss, _ = self._loss.forward(outputs, supervision, command)
            losses.append(loss.item())
        val_loss = float(np.mean(losses))
        wandb.log({'val/loss': val_loss}, step=global_step)
        return val_loss

    def learn(self, dataset_dir, train_epochs, env_wrapper, reset_step=False):
        if reset_step:
            self._starting_iteration = 0
            self._starting_epoch = 0

        self._policy = self._policy.to(self._device)
        torch.backends.cudnn.benchmark = True

        dataloader_train, dataloader_val = get_dataloader(dataset_dir, env_wrapper,
                                                          self._batch_size, self._num_workers,
                                                          im_augmentation=self._im_augmentation)
        global_step = 0
        best_val_loss = 1e10
        for i_epoch in range(self._starting_epoch, train_epochs):
            global_step = self._train_one_epoch(dataloader_train, i_epoch, global_step)
            val_loss = self._validate(dataloader_val, global_step)
            self._scheduler.step()

            ckpt_path = (Path('ckpt') / f'ckpt_{self._starting_iteration}_{i_epoch}.pth').as_posix()
            torch.save(
                {'policy_state_dict': self._policy.state_dict(),
                 'optimizer_state_dict': self._optimizer.state_dict(),
                 'scaler_state_dict': self._scaler.state_dict(),
                 'train_init_kwargs': self.get_init_kwargs(),
                 'policy_init_kwargs': self._policy.get_init_kwargs()},
                ckpt_path)
            wandb.save(f'./{ckpt_path}')
            if val_loss < best_val_loss:
                best_val_loss = val_loss
                log.info(f'New best val loss {val_loss:.4f} at epoch {i_epoch}')

        torch.cuda.empty_cache()
        self._starting_iteration += 1
        self._starting_epoch = 0

    def get_init_kwargs(self):
        return dict(
            batch_size=self._batch_size,
            num_workers=self._num_workers,
            learning_rate=self._learning_rate,
            lr_schedule_step=self._lr_schedule_step,
            lr_schedule_gamma=self._lr_schedule_gamma,
            starting_iteration=self._starting_iteration,
            starting_epoch=self._starting_epoch,
            use_amp=self._use_amp,
            im_augmentation=self._im_augmentation,
        )

    @classmethod
    def load(cls, policy, path):
        saved_variables = torch.load(path, map_location='cpu')
        trainer = cls(policy, **saved_variables['train_init_kwargs'])
        trainer._optimizer.load_state_dict(saved_variables['optimizer_state_dict'])
        if 'scaler_state_dict' in saved_variables:
            trainer._scaler.load_state_dict(saved_variables['scaler_state_dict'])
        return trainer
