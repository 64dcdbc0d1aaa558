'''
-----------------------------------------------------------------------------
Copyright (c) 2023, NVIDIA CORPORATION. All rights reserved.

NVIDIA CORPORATION and its licensors retain all intellectual property
and proprietary rights in and to this software, related documentation
and any modifications thereto. Any use, reproduction, disclosure or
distribution of this software and related documentation without an express
license agreement from NVIDIA CORPORATION is strictly prohibited.
-----------------------------------------------------------------------------
'''

import inspect
import json
import os
import time

import torch
import torch.distributed as dist
import wandb
from imaginaire.utils.termcolor import alert

from imaginaire.models.utils.model_average import ModelAverage
from imaginaire.utils.distributed import is_master, master_only, get_world_size
from imaginaire.utils.misc import to_cuda, requires_grad, set_random_seed
from imaginaire.utils.checkpointer import Checkpointer
from imaginaire.utils.set_up import get_model, get_loss


class Timer(object):
    """Lightweight iteration timer; synchronizes the device so kernel time is included."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.time_iteration = 0
        self.time_epoch = 0
        self.elapsed_iteration_time = 0

    def reset(self):
        self.time_iteration = 0
        self.time_epoch = 0
        self.elapsed_iteration_time = 0

    def _time_before_forward(self):
        if self.cfg.speed_benchmark:
            torch.cuda.synchronize()
            self.forw_time = time.time()

    def _time_before_step(self):
        if self.cfg.speed_benchmark:
            torch.cuda.synchronize()  # include the backward pass
            self.step_time = time.time()

    def _time_before_model_avg(self):
        if self.cfg.speed_benchmark:
            torch.cuda.synchronize()  # include the optimizer step
            self.avg_time = time.time()

    def _time_before_leave_gen(self):
        if self.cfg.speed_benchmark:
            torch.cuda.synchronize()  # include model averaging
            end_time = time.time()
            self.time_iteration += end_time - self.forw_time

    def start_of_iteration(self):
        self.iter_start = time.time()

    def end_of_iteration(self):
        self.elapsed_iteration_time += time.time() - self.iter_start


def get_optimizer(cfg_opt, model_params):
    """Build the optimizer named in the config."""
    params = [p for p in model_params if p.requires_grad]
    if cfg_opt.type == 'AdamW':
        opt = torch.optim.AdamW(params, lr=cfg_opt.params.lr, weight_decay=cfg_opt.params.weight_decay,
                                betas=(cfg_opt.params.get('beta1', 0.9), cfg_opt.params.get('beta2', 0.99)),
                                eps=cfg_opt.params.get('eps', 1e-15))
    elif cfg_opt.type == 'Adam':
        opt = torch.optim.Adam(params, lr=cfg_opt.params.lr, betas=(0.9, 0.99), eps=1e-15)
    elif cfg_opt.type == 'fused_adam':
        from apex.optimizers import FusedAdam
        opt = FusedAdam(params, lr=cfg_opt.params.lr, eps=cfg_opt.params.get('eps', 1e-8),
                        betas=(cfg_opt.params.get('beta1', 0.9), cfg_opt.params.get('beta2', 0.999)),
                        weight_decay=cfg_opt.params.get('weight_decay', 0.0))
    else:
        raise NotImplementedError(f'Optimizer {cfg_opt.type} is not yet implemented.')
    return opt


class BaseTrainer(object):
    r"""Base trainer. We expect that all trainers inherit this class.

    Args:
        cfg (obj): Global configuration.
        is_inference (bool): if True, load models for inference only.
    """

    def __init__(self, cfg, is_inference=True, seed=0):
        super().__init__()
        print('Setup trainer.')
        self.cfg = cfg
        # Create objects for the networks, optimizers, and schedulers.
        self.model = self.setup_model(cfg, seed=seed)
        if not is_inference:
            self.optim = self.setup_optimizer(cfg)
            self.sched = self.setup_scheduler(cfg, self.optim)
        else:
            self.optim = None
            self.sched = None
        self.model = self.wrap_model(cfg, self.model)
        # Data loaders & inference mode.
        self.is_inference = is_inference
        # Initialize automatic mixed precision training.
        self.init_amp()
        # Initialize loss functions.
        self.init_losses(cfg)

        self.checkpointer = Checkpointer(cfg, self.model, self.optim, self.sched)
        self.timer = Timer(cfg)

        # -------- The initialization steps below can be skipped during inference. --------
        if self.is_inference:
            return

        # Initialize logging attributes.
        self.init_logging_attributes()
        # Initialize validation parameters.
        self.init_val_parameters()
        # AWS credentials.
        if hasattr(cfg, 'aws_credentials_file'):
            with open(cfg.aws_credentials_file) as fin:
                self.credentials = json.load(fin)
        else:
            self.credentials = None
        if 'TORCH_HOME' not in os.environ:
            os.environ['TORCH_HOME'] = os.path.join(os.environ['HOME'], ".cache")

    def set_data_loader(self, cfg, split, shuffle=True, drop_last=True, seed=0):
        """Set the data loader corresponding to the indicated split."""
        from imaginaire.datasets.utils.get_dataloader import get_train_dataloader, get_val_dataloader
        assert (split in ["train", "val"])
        if split == "train":
            self.train_data_loader = get_train_dataloader(cfg.data, shuffle=shuffle, drop_last=drop_last, seed=seed)
        elif split == "val":
            self.eval_data_loader = get_val_dataloader(cfg.data, seed=seed)

    def setup_model(self, cfg, seed=0):
        r"""Return the networks. We will first set the random seed to a fixed value so that each GPU copy will be
        initialized to have the same network weights. We will then use different random seeds for different GPUs.
        """
        print('Setup model.')
        set_random_seed(seed, by_rank=False)
        model = get_model(cfg)
        model = model.to('cuda')
        print(f"Model size: {sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters")
        set_random_seed(seed, by_rank=True)
        return model

    def setup_optimizer(self, cfg):
        return get_optimizer(cfg.optim, self.model.parameters())

    def setup_scheduler(self, cfg, optim):
        return torch.optim.lr_scheduler.StepLR(optim, step_size=cfg.optim.sched.step_size,
                                               gamma=cfg.optim.sched.gamma)

    def wrap_model(self, cfg, model):
        r"""Wrap the networks with AMP DDP and (optionally) model average."""
        # Apply model average wrapper.
        if cfg.trainer.ema_config.enabled:
            model = ModelAverage(model, cfg.trainer.ema_config.beta, cfg.trainer.ema_config.start_iteration)
        if get_world_size() > 1:
            model = torch.nn.parallel.DistributedDataParallel(
                model,
                device_ids=[torch.cuda.current_device()],
                output_device=torch.cuda.current_device(),
                find_unused_parameters=cfg.trainer.ddp_config.find_unused_parameters,
                static_graph=cfg.trainer.ddp_config.static_graph,
                broadcast_buffers=False,
            )
        return model

    def init_amp(self):
        r"""Initialize the AMP grad scaler (loss scaling is a no-op when AMP is disabled)."""
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.cfg.trainer.amp_config.enabled)

    def init_losses(self, cfg):
        self.losses = dict()
        self.weights = {key: value for key, value in cfg.trainer.loss_weight.items() if value}
        self.criteria = get_loss(cfg)

    def init_logging_attributes(self):
        self.current_iteration = 0
        self.current_epoch = 0
        self.start_iteration_time = None
        self.start_epoch_time = None
        self.elapsed_iteration_time = 0

    def init_val_parameters(self):
        self.val_metrics = {}

    def start_of_epoch(self, current_epoch):
        self._start_of_epoch(current_epoch)
        self.current_epoch = current_epoch
        self.start_epoch_time = time.time()

    def start_of_iteration(self, data, current_iteration):
        data = self._start_of_iteration(data, current_iteration)
        data = to_cuda(data)
        self.current_iteration = current_iteration
        if not self.is_inference:
            self.model.train()
        self.start_iteration_time = time.time()
        return data

    def end_of_iteration(self, data, current_epoch, current_iteration):
        self.current_iteration = current_iteration
        self.current_epoch = current_epoch
        # Accumulate time
        self.elapsed_iteration_time += time.time() - self.start_iteration_time
        # Logging.
        if current_iteration % self.cfg.logging_iter == 0:
            avg_time = self.elapsed_iteration_time / self.cfg.logging_iter
            self.timer.time_iteration = avg_time
            print('Iteration: {}, average iter time: {:6f}.'.format(current_iteration, avg_time))
            self.elapsed_iteration_time = 0
            if self.cfg.speed_benchmark:
                print("Max memory allocated: {:.2f} GB".format(torch.cuda.max_memory_allocated() / 2 ** 30))
        self._end_of_iteration(data, current_epoch, current_iteration)
        # Save everything to the checkpoint by time period.
        if self.checkpointer.reached_checkpointing_period(current_iteration):
            self.checkpointer.save(current_epoch, current_iteration)
        # Update the learning rate policy for the generator if operating in the iteration mode.
        if self.cfg.optim.sched.iteration_mode:
            self.sched.step()
        # Compute metrics.
        if current_iteration % self.cfg.checkpoint.save_iter == 0:
            torch.cuda.empty_cache()

    def train_step(self, data, last_iter_in_epoch=False):
        r"""One training step."""
        self.model.train()
        # Start Forward
        self.timer._time_before_forward()
        autocast_dtype = getattr(self.cfg.trainer.amp_config, 'dtype', 'float16')
        autocast_dtype = torch.bfloat16 if autocast_dtype == 'bfloat16' else torch.float16
        amp_kwargs = {
            'enabled': self.cfg.trainer.amp_config.enabled,
            'dtype': autocast_dtype
        }
        with torch.autocast(device_type='cuda', **amp_kwargs):
            total_loss = self.model_forward(data)
            # Scale down the loss w.r.t. the gradient accumulation iterations.
            total_loss = total_loss / float(self.cfg.trainer.grad_accum_iter)

        # Backpropagate the loss.
        self.timer._time_before_step()
        self.scaler.scale(total_loss).backward()

        self._extra_step(data)

        # Perform an optimizer step. This enables gradient accumulation when grad_accum_iter is not 1.
        if (self.current_iteration + 1) % self.cfg.trainer.grad_accum_iter == 0 or last_iter_in_epoch:
            self.timer._time_before_model_avg()
            self.scaler.step(self.optim)
            self.scaler.update()
            # Zero out the gradients.
            self.optim.zero_grad(set_to_none=True)

        # Update model average.
        self.timer._time_before_leave_gen()
        if self.cfg.trainer.ema_config.enabled:
            self.model.module.update_average()

        self._detach_losses()

    def model_forward(self, data):
        raise NotImplementedError

    def _extra_step(self, data):
        pass

    def _detach_losses(self):
        for key in self.losses:
            self.losses[key] = self.losses[key].detach()

    def _start_of_epoch(self, current_epoch):
        pass

    def _start_of_iteration(self, data, current_iteration):
        return data

    def _end_of_iteration(self, data, current_epoch, current_iteration):
        pass

    def finalize(self, cfg):
        # Finish the W&B logger.
        if is_master():
            wandb.finish()
