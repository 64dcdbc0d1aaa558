#!/usr/bin/env python3
#
#    This file is part of Leela Chess.
#    Copyright (C) 2018-2024 The LCZero Authors
#
#    Leela Chess is free software: you can redistribute it and/or modify
#    it under the terms of the GNU General Public License as published by
#    the Free Software Foundation, either version 3 of the License, or
#    (at your option) any later version.
#
#    Leela Chess is distributed in the hope that it will be useful,
#    but WITHOUT ANY WARRANTY; without even the implied warranty of
#    MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
#    GNU General Public License for more details.

import bisect
import glob
import os
import time
from collections import defaultdict

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter

from net import Net
from model import LeelaModel

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def correct_policy(target, output):
    # Illegal moves are marked by a value of -1 in the labels - we mask these with large negative values
    output = output.float()
    move_is_legal = target >= 0
    output = torch.where(move_is_legal, output, torch.full_like(output, -1.0e4))
    # The large negative values will still break the loss, so we replace them with 0 once we mask them
    target = F.relu(target)
    return target, output


class PtProcess:
    def __init__(self, cfg):
        self.cfg = cfg
        self.net = Net()
        self.root_dir = os.path.join(self.cfg['training']['path'], self.cfg['name'])

        # Network structure
        self.RESIDUAL_FILTERS = self.cfg['model']['filters']
        self.RESIDUAL_BLOCKS = self.cfg['model']['residual_blocks']
        self.SE_ratio = self.cfg['model']['se_ratio']
        self.policy_channels = self.cfg['model'].get('policy_channels', 32)
        self.virtual_batch_size = self.cfg['model'].get('virtual_batch_size', None)
        self.moves_left = self.cfg['model'].get('moves_left', 'v1')

        precision = self.cfg['training'].get('precision', 'single')
        self.precision = precision
        self.use_amp = precision in ('half', 'bf16')
        self.amp_dtype = torch.float16 if precision == 'half' else torch.bfloat16
        if precision == 'bf16' and not torch.cuda.is_bf16_supported():
            raise ValueError("bf16 precision requested but the GPU does not support it")

        # Optionally pin the process to one GPU from the config
        gpu = self.cfg.get('gpu', 0)
        if DEVICE.type == "cuda":
            torch.cuda.set_device(gpu)
            torch.backends.cudnn.benchmark = True
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        self.gpu = gpu

        self.swa_enabled = self.cfg['training'].get('swa', False)
        # Limit momentum of SWA exponential average to 1 - 1/(swa_max_n + 1)
        self.swa_max_n = self.cfg['training'].get('swa_max_n', 0)
        self.renorm_enabled = self.cfg['training'].get('renorm', False)
        self.renorm_max_r = self.cfg['training'].get('renorm_max_r', 1)
        self.renorm_max_d = self.cfg['training'].get('renorm_max_d', 0)
        self.renorm_momentum = self.cfg['training'].get('renorm_momentum', 0.99)

        self.global_step = 0
        self.swa_count = 0
        self.last_steps = None
        self.time_start = None
        self.loss_weights = {
            'policy': self.cfg['training'].get('policy_loss_weight', 1.0),
            'value': self.cfg['training'].get('value_loss_weight', 1.0),
            'moves_left': self.cfg['training'].get('moves_left_loss_weight', 1.0),
            'reg': self.cfg['training'].get('reg_term_weight', 1.0),
        }

    def init(self, train_dataset, test_dataset, validation_dataset=None):
        self.train_dataset = train_dataset
        self.train_iter = iter(train_dataset)
        self.test_dataset = test_dataset
        self.test_iter = iter(test_dataset)
        self.validation_dataset = validation_dataset
        self.init_net()

    def init_net(self):
        self.model = LeelaModel(
            filters=self.RESIDUAL_FILTERS,
            blocks=self.RESIDUAL_BLOCKS,
            se_ratio=self.SE_ratio,
            policy_channels=self.policy_channels,
            moves_left=self.moves_left,
            attention_policy=self.cfg['model'].get('policy', 'convolution') == 'attention',
        ).cuda()

        if self.cfg['training'].get('compile', False):
            self.model = torch.compile(self.model)

        self.swa_model = None
        if self.swa_enabled:
            self.swa_model = LeelaModel(
                filters=self.RESIDUAL_FILTERS,
                blocks=self.RESIDUAL_BLOCKS,
                se_ratio=self.SE_ratio,
                policy_channels=self.policy_channels,
                moves_left=self.moves_left,
                attention_policy=self.cfg['model'].get('policy', 'convolution') == 'attention',
            ).to(DEVICE)
            self.swa_model.load_state_dict(self.model.state_dict())
            self.swa_model.eval()

        self.active_lr = 0.01
        self.optimizer = torch.optim.SGD(
            self.model.parameters(),
            lr=self.active_lr,
            momentum=0.9,
            nesterov=True,
            weight_decay=self.cfg['training'].get('weight_decay', 1e-4),
        )
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.precision == 'half')

        self.train_writer = SummaryWriter(os.path.join(os.getcwd(), "leelalogs/{}-train".format(self.cfg['name'])))
        self.test_writer = SummaryWriter(os.path.join(os.getcwd(), "leelalogs/{}-test".format(self.cfg['name'])))

    def _checkpoint_path(self, steps=None):
        if steps is None:
            return os.path.join(self.root_dir, "ckpt-latest.pt")
        return os.path.join(self.root_dir, "ckpt-{}.pt".format(steps))

    def save_checkpoint(self):
        os.makedirs(self.root_dir, exist_ok=True)
        state = {
            'model': self.model.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'scaler': self.scaler.state_dict(),
            'global_step': self.global_step,
            'swa_count': self.swa_count,
        }
        if self.swa_model is not None:
            state['swa_model'] = self.swa_model.state_dict()
        path = self._checkpoint_path(self.global_step)
        torch.save(state, path)
        torch.save(state, self._checkpoint_path())
        print("Model saved in file: {}".format(path))

    def restore(self):
        path = self._checkpoint_path()
        if not os.path.exists(path):
            print("No checkpoint found in {}, starting from scratch".format(self.root_dir))
            return
        print("Restoring from {0}".format(path))
        state = torch.load(path, map_location=lambda storage, loc: storage.cuda(self.gpu))
        self.model.load_state_dict(state['model'])
        self.optimizer.load_state_dict(state['optimizer'])
        self.scaler.load_state_dict(state['scaler'])
        self.global_step = state['global_step']
        self.swa_count = state.get('swa_count', 0)
        if self.swa_model is not None and 'swa_model' in state:
            self.swa_model.load_state_dict(state['swa_model'])

    def process_loop(self, batch_size, test_batches, batch_splits=1):
        # Get the initial steps value in case this is a resume from a step count
        # which is not a multiple of total_steps.
        steps = self.global_step
        total_steps = self.cfg['training']['total_steps']
        for _ in range(steps % total_steps, total_steps):
            self.process(batch_size, test_batches, batch_splits=batch_splits)

    def lr_for_step(self, steps):
        boundaries = self.cfg['training']['lr_boundaries']
        values = self.cfg['training']['lr_values']
        warmup_steps = self.cfg['training'].get('warmup_steps', 0)
        lr = values[bisect.bisect_right(boundaries, steps)]
        if steps < warmup_steps:
            lr = lr * (steps + 1) / warmup_steps
        return lr

    def _to_device(self, batch):
        # batch is (planes, probs, winner, best_q, plies_left) as numpy arrays from the chunk parser
        return tuple(torch.from_numpy(a).cuda(non_blocking=True) for a in batch)

    def compute_losses(self, x, y, z, q, m):
        with torch.autocast(device_type="cuda", dtype=self.amp_dtype, enabled=self.use_amp):
            policy, value, moves_left = self.model(x)
        y, policy = correct_policy(y, policy)
        policy_loss = torch.mean(-torch.sum(y * F.log_softmax(policy, dim=1), dim=1))
        value_target = z * (1.0 - self.cfg['training'].get('q_ratio', 0.0)) + q * self.cfg['training'].get('q_ratio', 0.0)
        value_loss = torch.mean(-torch.sum(value_target * F.log_softmax(value.float(), dim=1), dim=1))
        if moves_left is not None:
            scale = 20.0
            moves_left_loss = F.huber_loss(moves_left.float() / scale, m / scale, delta=10.0 / scale)
        else:
            moves_left_loss = torch.zeros((), device=x.device)
        total = (self.loss_weights['policy'] * policy_loss
                 + self.loss_weights['value'] * value_loss
                 + self.loss_weights['moves_left'] * moves_left_loss)
        policy_accuracy = (policy.argmax(dim=1) == y.argmax(dim=1)).float().mean()
        return total, policy_loss, value_loss, moves_left_loss, policy_accuracy

    def process(self, batch_size, test_batches, batch_splits=1):
        if not self.time_start:
            self.time_start = time.time()

        # Run test before first step to see delta since end of last run.
        if self.global_step % self.cfg['training']['total_steps'] == 0:
            self.calculate_test_summaries(test_batches)

        lr = self.lr_for_step(self.global_step)
        for group in self.optimizer.param_groups:
            group['lr'] = lr

        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        step_start = torch.cuda.Event(enable_timing=True)
        step_end = torch.cuda.Event(enable_timing=True)
        step_start.record()
        metrics = defaultdict(float)
        for _ in range(batch_splits):
            x, y, z, q, m = self._to_device(next(self.train_iter))
            total, policy_loss, value_loss, ml_loss, acc = self.compute_losses(x, y, z, q, m)
            self.scaler.scale(total / batch_splits).backward()
            metrics['policy'] += policy_loss.item() / batch_splits
            metrics['value'] += value_loss.item() / batch_splits
            metrics['moves_left'] += ml_loss.item() / batch_splits
            metrics['accuracy'] += acc.item() / batch_splits

        self.scaler.unscale_(self.optimizer)
        max_grad_norm = self.cfg['training'].get('max_grad_norm', 10000.0) * batch_splits
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_grad_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        step_end.record()

        self.global_step += 1
        steps = self.global_step

        if self.swa_enabled and steps % self.cfg['training'].get('swa_steps', 20) == 0:
            self.update_swa()

        train_every = self.cfg['training'].get('train_avg_report_steps', 50)
        if steps % train_every == 0:
            torch.cuda.synchronize()
            step_ms = step_start.elapsed_time(step_end)
            time_end = time.time()
            speed = 0
            if self.time_start:
                elapsed = time_end - self.time_start
                steps_elapsed = steps - (self.last_steps or 0)
                speed = batch_size * (steps_elapsed / elapsed)
            print("step {}, lr={:g} policy={:g} value={:g} mse={:g} ({:g} pos/s, last step {:.1f} ms, peak mem {:.0f} MiB)".format(
                steps, lr, metrics['policy'], metrics['value'], metrics['moves_left'], speed, step_ms,
                torch.cuda.max_memory_allocated() / 2 ** 20))
            torch.cuda.reset_peak_memory_stats()
            self.train_writer.add_scalar("Policy Loss", metrics['policy'], steps)
            self.train_writer.add_scalar("Value Loss", metrics['value'], steps)
            self.train_writer.add_scalar("Moves Left Loss", metrics['moves_left'], steps)
            self.train_writer.add_scalar("Policy Accuracy", metrics['accuracy'], steps)
            self.train_writer.add_scalar("Gradient norm", float(grad_norm) / batch_splits, steps)
            self.train_writer.add_scalar("LR", lr, steps)
            self.time_start = time_end
            self.last_steps = steps

        # Calculate test values every 'test_steps', but also ensure there is
        # one at the final step so the delta to the first step can be calculted.
        if steps % self.cfg['training']['test_steps'] == 0 or steps % self.cfg['training']['total_steps'] == 0:
            self.calculate_test_summaries(test_batches)

        # Save session and weights at end, and also optionally every 'checkpoint_steps'.
        if steps % self.cfg['training']['total_steps'] == 0 or (
                'checkpoint_steps' in self.cfg['training'] and steps % self.cfg['training']['checkpoint_steps'] == 0):
            self.save_checkpoint()
            leela_path = os.path.join(self.root_dir, "{}-{}".format(self.cfg['name'], steps))
            self.save_leelaz_weights(leela_path + ".pb.gz")
            if self.swa_enabled:
                self.save_swa_weights(leela_path + "-swa.pb.gz")

    @torch.no_grad()
    def update_swa(self):
        num = self.swa_count + 1
        rate = 1.0 / min(num, self.swa_max_n) if self.swa_max_n > 0 else 1.0 / num
        for swa_p, p in zip(self.swa_model.parameters(), self.model.parameters()):
            swa_p.mul_(1.0 - rate).add_(p.detach(), alpha=rate)
        for swa_b, b in zip(self.swa_model.buffers(), self.model.buffers()):
            swa_b.copy_(b)
        self.swa_count = min(num, self.swa_max_n) if self.swa_max_n > 0 else num

    @torch.no_grad()
    def calculate_test_summaries(self, test_batches):
        model = self.swa_model if self.swa_enabled and self.swa_model is not None else self.model
        model.eval()
        sums = defaultdict(float)
        for _ in range(test_batches):
            x, y, z, q, m = self._to_device(next(self.test_iter))
            total, policy_loss, value_loss, ml_loss, acc = self.compute_losses(x, y, z, q, m)
            sums['policy'] += policy_loss.item()
            sums['value'] += value_loss.item()
            sums['moves_left'] += ml_loss.item()
            sums['accuracy'] += acc.item()
        for key in sums:
            sums[key] /= test_batches
        steps = self.global_step
        self.test_writer.add_scalar("Policy Loss", sums['policy'], steps)
        self.test_writer.add_scalar("Value Loss", sums['value'], steps)
        self.test_writer.add_scalar("Moves Left Loss", sums['moves_left'], steps)
        self.test_writer.add_scalar("Policy Accuracy", sums['accuracy'] * 100.0, steps)
        print("step {}, policy={:g} value={:g} policy accuracy={:g}% mse={:g}".format(
            steps, sums['policy'], sums['value'], sums['accuracy'] * 100.0, sums['moves_left']))
        self.model.train()

    def save_leelaz_weights(self, filename):
        self.net.fill_net(self.model)
        self.net.save_proto(filename)

    def save_swa_weights(self, filename):
        self.net.fill_net(self.swa_model)
        self.net.save_proto(filename)
