"""
trainer.py - wrapper and utility functions for network training
Compute loss, back-prop, update parameters, logging, etc.
"""
import os
import logging
from typing import Dict

import torch
import torch.nn as nn
import torch.optim as optim
from omegaconf import DictConfig

from cutie.model.train_wrapper import CutieTrainWrapper
from cutie.model.losses import LossComputer
from cutie.utils.log_integrator import Integrator
from cutie.utils.image_saver import vis
from cutie.utils.time_estimator import TimeEstimator

log = logging.getLogger()


def get_parameter_groups(model: nn.Module, stage_cfg: DictConfig, print_log: bool = False):
    """
    Assign different weight decays and learning rates to different parameters.
    Returns a parameter group which can be passed to the optimizer.
    """
    weight_decay = stage_cfg.weight_decay
    embed_weight_decay = stage_cfg.embed_weight_decay
    backbone_lr_ratio = stage_cfg.backbone_lr_ratio
    base_lr = stage_cfg.learning_rate

    backbone_params = []
    embed_params = []
    other_params = []

    embedding_names = ['summary_pos', 'query_init', 'query_emb', 'obj_pe']
    embedding_names = [e + '.weight' for e in embedding_names]

    # inspired by detectron2
    memo = set()
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        # Avoid duplicating parameters
        if param in memo:
            continue
        memo.add(param)

        if name.startswith('module'):
            name = name[7:]

        inserted = False
        if name.startswith('pixel_encoder.'):
            backbone_params.append(param)
            inserted = True
            if print_log:
                log.info(f'{name} counted as a backbone parameter.')
        else:
            for e in embedding_names:
                if name.endswith(e):
                    embed_params.append(param)
                    inserted = True
                    if print_log:
                        log.info(f'{name} counted as an embedding parameter.')
                    break

        if not inserted:
            other_params.append(param)

    parameter_groups = [
        {'params': backbone_params, 'lr': base_lr * backbone_lr_ratio, 'weight_decay': weight_decay},
        {'params': embed_params, 'lr': base_lr, 'weight_decay': embed_weight_decay},
        {'params': other_params, 'lr': base_lr, 'weight_decay': weight_decay},
    ]

    return parameter_groups


class Trainer:
    def __init__(self, cfg: DictConfig, stage_cfg: DictConfig, log, run_path, local_rank, world_size):
        self.exp_id = cfg['exp_id']
        self.stage = stage_cfg['name']
        self.use_amp = stage_cfg.amp
        self.local_rank = local_rank

        # mixed precision: bf16 where the card supports it, fp16 + loss scaling otherwise
        self.amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16

        self.cutie = nn.parallel.DistributedDataParallel(CutieTrainWrapper(cfg, stage_cfg).cuda(),
                                                         device_ids=[local_rank],
                                                         output_device=local_rank,
                                                         broadcast_buffers=False,
                                                         find_unused_parameters=True)
        self.size = stage_cfg['crop_size']

        # Set up logger when local_rank=0
        self.log = log
        self.run_path = run_path
        self.log.log_string('model_size',
                            str(sum([param.nelement() for param in self.cutie.parameters()])))
        self.log.log_string(
            'number_of_parameters_that_require_gradient: ',
            str(sum([param.nelement()
                     for param in filter(lambda p: p.requires_grad, self.cutie.parameters())])))
        self.log.log_string('torch version: ', torch.__version__)
        self.train_integrator = Integrator(self.log, distributed=True)

        self.train()

        parameter_groups = get_parameter_groups(self.cutie, stage_cfg, print_log=(local_rank == 0))
        self.optimizer = optim.AdamW(parameter_groups,
                                     lr=stage_cfg['learning_rate'],
                                     weight_decay=stage_cfg['weight_decay'],
                                     eps=1e-6 if self.use_amp else 1e-8,
                                     foreach=True)
        self.loss_computer = LossComputer(cfg, stage_cfg)

        if self.use_amp:
            self.scaler = torch.cuda.amp.GradScaler(enabled=(self.amp_dtype == torch.float16))
        self.clip_grad_norm = stage_cfg['clip_grad_norm']

        # Learning rate
        if stage_cfg['lr_schedule'] == 'constant':
            self.scheduler = optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda=lambda _: 1)
        elif stage_cfg['lr_schedule'] == 'poly':
            total_num_iter = stage_cfg['num_iterations']
            self.scheduler = optim.lr_scheduler.LambdaLR(
                self.optimizer, lr_lambda=lambda x: (1 - (x / total_num_iter))**0.9)
        elif stage_cfg['lr_schedule'] == 'step':
            self.scheduler = optim.lr_scheduler.MultiStepLR(self.optimizer,
                                                            stage_cfg['lr_schedule_steps'],
                                                            stage_cfg['lr_schedule_gamma'])
        else:
            raise NotImplementedError

        # Logging info
        self.log_text_interval = cfg['log_text_interval']
        self.log_image_interval = cfg['log_image_interval']
        self.save_weights_interval = cfg['save_weights_interval']
        self.save_checkpoint_interval = cfg['save_checkpoint_interval']
        self.num_iterations = stage_cfg['num_iterations']
        if cfg['debug']:
            self.log_text_interval = self.log_image_interval = 1

        self.log.time_estimator = TimeEstimator(self.num_iterations, self.log_text_interval)

    def do_pass(self, data: Dict, it: int = 0):
        # No need to store the gradient outside training
        torch.set_grad_enabled(self._is_train)

        for k, v in data.items():
            if isinstance(v, torch.Tensor):
                data[k] = v.cuda(non_blocking=True)

        num_objects = data['info']['num_objects']
        num_filled_objects = [o.item() for o in num_objects]

        with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):
            out = self.cutie(data)
            losses = self.loss_computer.compute({**data, **out}, num_filled_objects)

            # Logging
            if self._do_log:
                self.integrator.add_dict(losses)
                if self._is_train:
                    if it % self.log_image_interval == 0 and it != 0:
                        if self.local_rank == 0:
                            images = {**data, **out}
                            size = (384, 384)
                            self.log.log_image(self.stage, 'vis', vis(images, size, num_objects), it)

            if self._is_train:
                if it % self.log_text_interval == 0 and it != 0:
                    self.train_integrator.add_tensor('lr', self.scheduler.get_last_lr()[0])
                    self.train_integrator.finalize(self.exp_id, self.stage, it)
                    self.train_integrator.reset_except_hooks()

                if it % self.save_weights_interval == 0 and it != 0:
                    self.save_weights(it)

                if it % self.save_checkpoint_interval == 0 and it != 0:
                    self.save_checkpoint(it)

        # Backward pass
        self.optimizer.zero_grad(set_to_none=True)
        if self.use_amp:
            self.scaler.scale(losses['total_loss']).backward()
            self.scaler.unscale_(self.optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(self.cutie.parameters(), self.clip_grad_norm)
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            losses['total_loss'].backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(self.cutie.parameters(), self.clip_grad_norm)
            self.optimizer.step()

        self.integrator.add_tensor('grad_norm', grad_norm.item())
        self.scheduler.step()

    def save_weights(self, it):
        if self.local_rank != 0:
            return

        os.makedirs(self.run_path, exist_ok=True)
        model_path = os.path.join(self.run_path, f'{self.exp_id}_{self.stage}_{it}.pth')
        torch.save(self.cutie.module.state_dict(), model_path)
        self.log.info(f'Network weights saved to {model_path}.')

    def save_checkpoint(self, it):
        if self.local_rank != 0:
            return

        os.makedirs(self.run_path, exist_ok=True)
        checkpoint_path = os.path.join(self.run_path, f'{self.exp_id}_{self.stage}_ckpt_{it}.pth')
        checkpoint = {
            'it': it,
            'weights': self.cutie.module.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'scheduler': self.scheduler.state_dict()
        }
        torch.save(checkpoint, checkpoint_path)
        self.log.info(f'Checkpoint saved to {checkpoint_path}.')

    def load_checkpoint(self, path):
        # This method loads everything and should be used to resume training
        map_location = 'cuda:%d' % self.local_rank
        checkpoint = torch.load(path, map_location={'cuda:0': map_location}, weights_only=False)

        it = checkpoint['it']
        weights = checkpoint['weights']
        optimizer = checkpoint['optimizer']
        scheduler = checkpoint['scheduler']

        self.cutie.module.load_state_dict(weights)
        self.optimizer.load_state_dict(optimizer)
        self.scheduler.load_state_dict(scheduler)

        self.log.info(f'Global iteration {it} loaded.')
        self.log.info('Network weights, optimizer states, and scheduler states loaded.')

        return it

    def load_weights_in_memory(self, src_dict):
        self.cutie.module.load_weights(src_dict)
        self.log.info('Network weights loaded from memory.')

    def load_weights(self, path):
        # This method loads only the network weight and should be used to load a pretrained model
        src_dict = torch.load(path, map_location=f'cuda:{self.local_rank}', weights_only=True)

        self.log.info(f'Importing network weights from {path}...')
        self.load_weights_in_memory(src_dict)

    def train(self):
        self._is_train = True
        self._do_log = True
        self.integrator = self.train_integrator
        self.cutie.module.train()
        return self

    def val(self):
        self._is_train = False
        self._do_log = True
        self.cutie.module.eval()
        return self
