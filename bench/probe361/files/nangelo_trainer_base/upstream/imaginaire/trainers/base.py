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

import importlib
import inspect
import json
import os
import time

import torch
import torch.distributed as dist
import wandb
from torch.cuda.amp import GradScaler, autocast
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from tqdm import tqdm

from imaginaire.utils.distributed import is_master, master_only, get_world_size
from imaginaire.utils.distributed import master_only_print as print
from imaginaire.utils.misc import to_cuda, requires_grad, Timer, Checkpointer
from imaginaire.utils.set_random_seed import set_random_seed
from imaginaire.models.utils.init_weight import weights_init
from imaginaire.datasets.utils.get_dataloader import get_train_dataloader, get_val_dataloader


class BaseTrainer(object):
    r"""Base trainer. We expect that all trainers inherit this class.

    Args:
        cfg (obj): Global configuration.
        is_inference (bool): if True, load the test dataloader and run in inference mode.
    """

    def __init__(self, cfg, is_inference=True, seed=0):
        super().__init__()
        print('Setup trainer.')
        self.cfg = cfg
        # Create objects for the networks, optimizers, and schedulers.
        self.model = self.setup_model(cfg, seed=seed)
        if not is_inference:
            self.optim = self.setup_optimizer(cfg, self.model, seed=seed)
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

        self.current_iteration = 0
        self.current_epoch = 0
        self.start_iteration_time = None
        self.elapsed_iteration_time = 0

    def set_data_loader(self, cfg, split, shuffle=True, drop_last=True, seed=0):
        """Set the data loader corresponding to the indicated split.
        Args:
            split (str): Must be either 'train', 'val', or 'test'.
            shuffle (bool): Whether to shuffle the data (only applies to the training set).
            drop_last (bool): Whether to drop the last batch if it is not full (only applies to the training set).
            seed (int): Random seed.
        """
        assert (split in ["train", "val", "test"])
        if split == "train":
            self.train_data_loader = get_train_dataloader(cfg.data, shuffle=shuffle, drop_last=drop_last, seed=seed)
        elif split == "val":
            self.eval_data_loader = get_val_dataloader(cfg.data, seed=seed)
        elif split == "test":
            self.eval_data_loader = torch.utils.data.DataLoader(
                self.test_dataset, batch_size=cfg.data.val.batch_size, shuffle=False,
                pin_memory=True, num_workers=cfg.data.num_workers, drop_last=False)

    def setup_model(self, cfg, seed=0):
        r"""Return the networks. We will first set the random seed to a fixed value so that each GPU copy will be
        initialized to have the same network weights. We will then use different random seeds for different GPUs.
        After this we will wrap the generator with a moving average model if applicable. It is followed by getting
        the model object

        Args:
            cfg (obj): Global configuration.
            seed (int): Random seed.
        """
        print(f"Setup model with seed: {seed}")
        set_random_seed(seed, by_rank=False)
        lib_model = importlib.import_module(cfg.model.type)
        model = lib_model.Model(cfg.model, cfg.data)
        print('model parameter count: {:,}'.format(_calculate_model_size(model)))
        print(f'Initialize model weights using type: {cfg.trainer.init.type}, gain: {cfg.trainer.init.gain}')
        init_bias = getattr(cfg.trainer.init, 'bias', None)
        init_gain = cfg.trainer.init.gain or 1.
        model.apply(weights_init(cfg.trainer.init.type, init_gain, init_bias))
        return model

    def setup_optimizer(self, cfg, model, seed=0):
        r"""Return the optimizers."""
        optim = model.get_param_groups(cfg.optim) if hasattr(model, 'get_param_groups') else model.parameters()
        optim_cls = getattr(torch.optim, cfg.optim.type)
        return optim_cls(optim, **cfg.optim.params)

    def setup_scheduler(self, cfg, optim):
        r"""Return the schedulers."""
        sched_cls = getattr(torch.optim.lr_scheduler, cfg.optim.sched.type)
        return sched_cls(optim, **cfg.optim.sched.params)

    def wrap_model(self, cfg, model):
        r"""Wrap the networks with AMP DDP and (optionally) model average.

        Args:
            cfg (obj): Global configuration.
            model (obj): Model object.
        """
        # Moving model to GPU and wrap it with DDP.
        model = model.to('cuda')
        if dist.is_available() and dist.is_initialized():
            model = torch.nn.parallel.DistributedDataParallel(
                model,
                device_ids=[cfg.local_rank],
                output_device=cfg.local_rank,
                find_unused_parameters=cfg.trainer.ddp_config.find_unused_parameters,
                static_graph=cfg.trainer.ddp_config.static_graph,
                broadcast_buffers=False,
            )
        self.model_module = model.module if hasattr(model, 'module') else model
        return model

    def init_amp(self):
        r"""Initialize automatic mixed precision training."""
        if getattr(self.cfg.trainer, 'allow_tf32', True):
            print("Allow TensorFloat32 operations on supported devices")
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        else:
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False

        if self.cfg.trainer.amp_config.enabled:
            print("Using automatic mixed precision training.")

        # amp scaler can be used without mixed precision training
        if hasattr(self.cfg.trainer, 'scaler_config'):
            scaler_kwargs = vars(self.cfg.trainer.scaler_config)
            scaler_kwargs['enabled'] = self.cfg.trainer.amp_config.enabled and \
                getattr(self.cfg.trainer.scaler_config, 'enabled', True)
        else:
            scaler_kwargs = vars(self.cfg.trainer.amp_config)  # backward compatibility
            scaler_kwargs.pop('dtype', None)
            scaler_kwargs = {'enabled': self.cfg.trainer.amp_config.enabled}
        self.scaler = GradScaler(**scaler_kwargs)

    def init_losses(self, cfg):
        r"""Initialize loss functions. All loss names have weights. Some have criterion modules."""
        self.losses = dict()

        # Mapping from loss names to criterion modules.
        self.criteria = torch.nn.ModuleDict()
        # Mapping from loss names to loss weights.
        self.weights = {key: value for key, value in cfg.trainer.loss_weight.__dict__.items() if value}
        self._init_loss(cfg)  # this should be implemented by children classes
        for loss_name, loss_weight in self.weights.items():
            print("Loss {:<20} Weight {}".format(loss_name, loss_weight))
            if loss_name in self.criteria.keys() and self.criteria[loss_name] is not None:
                self.criteria[loss_name].to('cuda')

    def init_wandb(self, cfg, wandb_id=None, project="", run_name=None, mode="online", resume="allow", use_group=False):
        r"""Initialize Weights & Biases (wandb) logger."""
        if is_master():
            print('Initialize wandb')
            if not wandb_id:
                wandb_path = os.path.join(cfg.logdir, "wandb_id.txt")
                if self.checkpointer.resume and os.path.exists(wandb_path):
                    with open(wandb_path, "r") as f:
                        wandb_id = f.read()
                else:
                    wandb_id = wandb.util.generate_id()
                    with open(wandb_path, "w+") as f:
                        f.write(wandb_id)
            if use_group:
                group, name = cfg.logdir.split("/")[-2:]
            else:
                group, name = None, os.path.basename(cfg.logdir)
            if run_name is not None:
                name = run_name
            wandb.init(id=wandb_id, project=project, config=cfg, group=group, name=name, dir=cfg.logdir,
                       resume=resume, settings=wandb.Settings(start_method="fork"), mode=mode)
            wandb.config.update({'dataset': cfg.data.name})
            wandb.watch(self.model_module)

    def start_of_iteration(self, data, current_iteration):
        r"""Things to do before an iteration.

        Args:
            data (dict): Data used for the current iteration.
            current_iteration (int): Current iteration number.
        """
        data = self._start_of_iteration(data, current_iteration)
        data = to_cuda(data)
        self.current_iteration = current_iteration
        if not self.is_inference:
            self.model.train()
        self.start_iteration_time = time.time()
        return data

    def end_of_iteration(self, data, current_epoch, current_iteration):
        r"""Things to do after an iteration."""
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
                # only needed when analyzing computation bottleneck.
                self.timer._print_speed_benchmark(avg_time)

        # Do validation on the val set.
        if current_iteration % self.cfg.validation_iter == 0:
            if self.cfg.data.name is not None:
                self.mode = "val"
                self.test_metric = self.test(self.eval_data_loader, mode="val", show_pbar=False)
                self.mode = "train"

        # Log to wandb.
        if current_iteration % self.cfg.logging_iter == 0:
            # Compute the elapsed time (as in the original base trainer).
            if is_master():
                wandb.log({
                    "time/iteration": self.timer.time_iteration,
                    "memory/max_allocated_gb": torch.cuda.max_memory_allocated() / 1024 ** 3,
                }, step=self.current_iteration)

        # Save everything to the checkpoint by time period.
        if current_iteration % self.cfg.checkpoint.save_iter == 0:
            self.checkpointer.save(current_epoch, current_iteration)

    def training_step(self, data, last_iter_in_epoch=False):
        r"""One training step.

        Args:
            data (dict): Data used for the current iteration.
        """
        # Set requires_grad flags.
        requires_grad(self.model_module, True)

        # Compute the loss.
        self.timer._time_before_forward()

        autocast_dtype = getattr(self.cfg.trainer.amp_config, 'dtype', 'float16')
        autocast_dtype = torch.bfloat16 if autocast_dtype == 'bfloat16' else torch.float16
        amp_kwargs = {
            'enabled': self.cfg.trainer.amp_config.enabled,
            'dtype': autocast_dtype
        }
        with autocast(**amp_kwargs):
            total_loss = self.model_forward(data)
            # Scale down the loss w.r.t. gradient accumulation iterations.
            total_loss = total_loss / float(self.cfg.trainer.grad_accum_iter)

        # Backpropagate the loss.
        self.timer._time_before_backward()
        self.scaler.scale(total_loss).backward()

        self._extra_step(data)

        # Perform an optimizer step. This enables gradient accumulation when grad_accum_iter is not 1.
        if (self.current_iteration + 1) % self.cfg.trainer.grad_accum_iter == 0 or last_iter_in_epoch:
            self.timer._time_before_step()
            self.scaler.step(self.optim)
            self.scaler.update()
            # Zero out the gradients.
            self.optim.zero_grad(set_to_none=True)

        # Update model average.
        self.timer._time_before_model_avg()
        self.timer._time_before_leave_gen()

    def train(self, cfg, data_loader, single_gpu=False, profile=False, show_pbar=False):
        start_epoch = self.checkpointer.resume_epoch or self.current_epoch  # The epoch to start with.
        current_iteration = self.checkpointer.resume_iteration or self.current_iteration  # The starting iteration.

        self.current_epoch = start_epoch
        self.current_iteration = current_iteration

        if profile:
            prof = torch.profiler.profile(
                activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                on_trace_ready=tensorboard_trace_handler(os.path.join(cfg.logdir, 'profiler')),
                record_shapes=True,
                with_stack=True)
            prof.start()

        for current_epoch in range(start_epoch, cfg.max_epoch):
            if not single_gpu:
                data_loader.sampler.set_epoch(current_epoch)
            self.start_of_epoch(current_epoch)
            if show_pbar:
                data_loader_wrapper = tqdm(data_loader, desc=f"Training epoch {current_epoch + 1}", leave=False)
            else:
                data_loader_wrapper = data_loader
            for it, data in enumerate(data_loader_wrapper):
                data = self.start_of_iteration(data, current_iteration)
                # Update the parameters.
                self.training_step(data, last_iter_in_epoch=(it == len(data_loader) - 1))

                current_iteration += 1
                if show_pbar:
                    data_loader_wrapper.set_postfix(iter=current_iteration)
                if it == len(data_loader) - 1:
                    self.end_of_iteration(data, current_epoch + 1, current_iteration)
                else:
                    self.end_of_iteration(data, current_epoch, current_iteration)
                if profile:
                    prof.step()
                if current_iteration >= cfg.max_iter:
                    print('Done with training!!!')
                    if profile:
                        prof.stop()
                    return
            self.end_of_epoch(data, current_epoch + 1, current_iteration)
        print('Done with training!!!')

    @torch.no_grad()
    def test(self, data_loader, output_dir=None, inference_args=None, mode="test", show_pbar=False):
        """The evaluation/inference engine.
        Args:
            data_loader: The data loader.
            output_dir: Output directory to dump the test results.
            inference_args: (unused)
            mode: Evaluation mode {"val", "test"}. Can be other modes, but will only gather the data.
        Returns:
            data_all: A dictionary of all the data.
        """
        if self.cfg.trainer.ema_config.enabled:
            model = self.model.module.averaged_model
        else:
            model = self.model.module
        model.eval()
        if show_pbar:
            data_loader = tqdm(data_loader, desc="Evaluating", leave=False)
        data_batches = []
        for it, data in enumerate(data_loader):
            data = self.start_of_iteration(data, current_iteration=self.current_iteration)
            output = model.inference(data)
            data.update(output)
            data_batches.append(data)
        torch.cuda.empty_cache()
        return data_batches

    def _start_of_iteration(self, data, current_iteration):
        return data

    def start_of_epoch(self, current_epoch):
        self.current_epoch = current_epoch
        self.start_epoch_time = time.time()

    def end_of_epoch(self, data, current_epoch, current_iteration):
        self.current_iteration = current_iteration
        self.current_epoch = current_epoch
        elapsed_epoch_time = time.time() - self.start_epoch_time
        print('Epoch: {}, total time: {:6f}.'.format(current_epoch, elapsed_epoch_time))
        self.timer.time_epoch = elapsed_epoch_time

    def _extra_step(self, data):
        pass

    def _init_loss(self, cfg):
        raise NotImplementedError

    def model_forward(self, data):
        raise NotImplementedError

def _calculate_model_size(model):
    r"""Calculate number of parameters in a PyTorch network."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
