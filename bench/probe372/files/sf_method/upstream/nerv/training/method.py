import os
import time
import copy
from tqdm import tqdm

import wandb
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from nerv.utils.misc import AverageMeter, MeanMetric
from nerv.utils.io import mkdir_or_exist, glob_all
from nerv.training.optim import filter_wd_parameters, CosineAnnealingWarmupRestarts


class BaseMethod:
    """Base method for training a model.

    Handles DDP wrapping, fp16 (native AMP), checkpointing, wandb logging and
    evaluation. Subclasses override `_training_step_start`, `_configure_optimizers`
    and optionally `validation_epoch` / `_sample_video`.
    """

    def __init__(
        self,
        model,
        datamodule,
        params,
        ckp_path,
        local_rank=0,
        use_ddp=False,
        use_fp16=False,
        val_only=False,
    ):
        self.model = model
        self.datamodule = datamodule
        self.params = params
        self.ckp_path = ckp_path
        self.local_rank = local_rank
        self.use_ddp = use_ddp
        self.use_fp16 = use_fp16
        self.val_only = val_only

        # the GPU this process is bound to
        self.device = torch.device(f'cuda:{local_rank}')
        self.gpus = torch.cuda.device_count() if use_ddp else 1
        self.print_iter = params.print_iter
        self.save_iter = getattr(params, 'save_iter', 0)
        self.save_epoch_end = getattr(params, 'save_epoch_end', False)
        self.eval_interval = getattr(params, 'eval_interval', 1)
        self.max_epochs = params.max_epochs
        self.clip_grad = getattr(params, 'grad_clip', 0.)

        self.it, self.epoch = 0, 0
        self.stats_dict = {}

        self.model = self.model.to(self.device)
        if self.use_ddp:
            self.model = DDP(
                self.model,
                device_ids=[self.local_rank],
                output_device=self.local_rank,
                find_unused_parameters=getattr(params, 'find_unused', False),
            )

        # build dataloaders
        self.train_loader, self.val_loader = \
            self.datamodule.train_loader, self.datamodule.val_loader
        if not val_only:
            self.optimizer, (self.scheduler, self.scheduler_method) = \
                self._configure_optimizers()
        else:
            self.optimizer, self.scheduler, self.scheduler_method = None, None, ''

        # native AMP
        self.grad_scaler = torch.cuda.amp.GradScaler(enabled=self.use_fp16)

        self.load_checkpoint()
        print(f'Use fp16: {self.use_fp16}, DDP: {self.use_ddp}, GPUs: {self.gpus}')

    # ------------------------------------------------------------------ utils
    @property
    def _is_master(self):
        return self.local_rank == 0

    @property
    def _model(self):
        return self.model.module if self.use_ddp else self.model

    def _get_stats_dict(self):
        return {k: v.compute() for k, v in self.stats_dict.items()}

    def _reset_stats(self):
        for v in self.stats_dict.values():
            v.reset()

    def _accumulate_stats(self, stats_dict, test=False):
        for k, v in stats_dict.items():
            if k not in self.stats_dict:
                self.stats_dict[k] = MeanMetric(device=self.device) if test \
                    else AverageMeter()
            self.stats_dict[k].update(v)

    def _log_train(self, out_dict):
        if not self._is_master:
            return
        x = {f'train/{k}': v.item() if torch.is_tensor(v) else v
             for k, v in out_dict.items()}
        x['train/lr'] = self.optimizer.param_groups[0]['lr']
        x['train/epoch'] = self.epoch
        x['train/it'] = self.it
        wandb.log(x, step=self.it)
        print(', '.join(f'{k}: {v:.4f}' if isinstance(v, float) else f'{k}: {v}'
                        for k, v in x.items()))

    @staticmethod
    def _sync(x):
        """All-reduce a scalar tensor across ranks and return the mean."""
        if not dist.is_initialized():
            return x
        x = x.clone()
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
        return x / dist.get_world_size()

    # ------------------------------------------------------------- training
    def _training_step_start(self):
        pass

    def _training_step_end(self, loss_dict):
        pass

    def _loss_function(self, data_dict):
        out_dict = self.model(data_dict)
        return self._model.calc_train_loss(data_dict, out_dict)

    def _training_step(self, batch):
        data_dict = {k: v.to(self.device, non_blocking=True)
                     for k, v in batch.items() if torch.is_tensor(v)}

        with torch.cuda.amp.autocast(enabled=self.use_fp16):
            loss_dict = self._loss_function(data_dict)
        loss = sum(loss_dict.values())

        self.optimizer.zero_grad(set_to_none=True)
        self.grad_scaler.scale(loss).backward()
        if self.clip_grad > 0.:
            self.grad_scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_grad)
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()

        if self.scheduler_method == 'step':
            self.scheduler.step()
        loss_dict = {k: v.detach() for k, v in loss_dict.items()}
        loss_dict['total_loss'] = loss.detach()
        return loss_dict

    def _training_epoch_start(self):
        if self.use_ddp:
            self.train_loader.sampler.set_epoch(self.epoch)

    def _training_epoch_end(self):
        if self.scheduler_method == 'epoch':
            self.scheduler.step()

    def train_one_epoch(self):
        self.model.train()
        self._training_epoch_start()
        t0 = time.time()
        for batch in tqdm(self.train_loader, disable=not self._is_master):
            self._training_step_start()
            out_dict = self._training_step(batch)
            self._training_step_end(out_dict)
            self.it += 1
            if self.it % self.print_iter == 0:
                out_dict['data_time'] = time.time() - t0
                self._log_train(out_dict)
            if self.save_iter > 0 and self.it % self.save_iter == 0:
                self.save_checkpoint()
            t0 = time.time()
        self._training_epoch_end()

    def fit(self, resume_from='', san_check_val_step=1):
        if resume_from:
            self.load_checkpoint(resume_from)
        if self.val_only:
            self.validation_epoch(self.model, san_check_step=-1)
            return
        if san_check_val_step > 0:
            self.validation_epoch(self.model, san_check_step=san_check_val_step,
                                  sample_video=False)
        while self.epoch < self.max_epochs:
            self.train_one_epoch()
            self.epoch += 1
            if self.epoch % self.eval_interval == 0 or \
                    self.epoch == self.max_epochs:
                self.validation_epoch(self.model)
                self._sample_video(self.model)
            if self.save_epoch_end:
                self.save_checkpoint(save_ep_ckp=True)
            else:
                self.save_checkpoint()
            # free cached blocks between epochs, the video decoder is memory hungry
            torch.cuda.empty_cache()

    # ----------------------------------------------------------- validation
    @torch.no_grad()
    def validation_epoch(self, model, san_check_step=-1, sample_video=True):
        model.eval()
        self._reset_stats()
        for i, batch in enumerate(tqdm(self.val_loader, disable=not self._is_master)):
            data_dict = {k: v.to(self.device) for k, v in batch.items()
                         if torch.is_tensor(v)}
            out_dict = model(data_dict)
            loss_dict = self._model.calc_eval_loss(data_dict, out_dict)
            self._accumulate_stats(loss_dict, test=True)
            if 0 < san_check_step <= i + 1:
                break
        stats = self._get_stats_dict()
        if self._is_master:
            wandb.log({f'val/{k}': v for k, v in stats.items()}, step=self.it)
            print('Validation:', ', '.join(f'{k}: {v:.4f}' for k, v in stats.items()))
        return stats

    @torch.no_grad()
    def _sample_video(self, model):
        pass

    # ------------------------------------------------------------ optimizer
    def _configure_optimizers(self):
        params = self.params
        lr = params.lr
        wd = getattr(params, 'weight_decay', 0.)
        if wd > 0.:
            param_groups = filter_wd_parameters(self._model, wd)
        else:
            param_groups = self.model.parameters()
        optimizer = torch.optim.Adam(param_groups, lr=lr, weight_decay=0.)
        total_steps = params.max_epochs * len(self.train_loader)
        warmup_steps = params.warmup_steps_pct * total_steps
        scheduler = CosineAnnealingWarmupRestarts(
            optimizer,
            total_steps,
            max_lr=lr,
            min_lr=lr / 100.,
            warmup_steps=warmup_steps,
        )
        return optimizer, (scheduler, 'step')

    # ----------------------------------------------------------- checkpoint
    def save_checkpoint(self, save_ep_ckp=False):
        if not self._is_master:
            return
        ckp = {
            'state_dict': self._model.state_dict(),
            'opt_state_dict': self.optimizer.state_dict(),
            'scheduler_state_dict': self.scheduler.state_dict()
            if self.scheduler is not None else None,
            'grad_scaler': self.grad_scaler.state_dict(),
            'epoch': self.epoch,
            'it': self.it,
        }
        if save_ep_ckp:
            ckp_path = os.path.join(self.ckp_path, f'model_{self.epoch}.pth')
        else:
            ckp_path = os.path.join(self.ckp_path, f'model_{self.it}.pth')
        torch.save(ckp, ckp_path)
        print(f'INFO: saving checkpoint {ckp_path}')
        # keep only the latest few iteration checkpoints
        ckp_files = sorted(glob_all(self.ckp_path), key=os.path.getmtime)
        ckp_files = [f for f in ckp_files if os.path.basename(f).startswith('model_')]
        for f in ckp_files[:-3]:
            os.remove(f)

    def load_checkpoint(self, ckp_path=None, auto_detect=True):
        if ckp_path is None:
            if not auto_detect:
                return
            mkdir_or_exist(self.ckp_path)
            ckp_files = glob_all(self.ckp_path)
            ckp_files = [f for f in ckp_files if f.endswith('.pth')]
            if not ckp_files:
                return
            ckp_path = max(ckp_files, key=os.path.getmtime)
        ckp = torch.load(ckp_path, map_location='cpu')
        self._model.load_state_dict(ckp['state_dict'])
        if self.val_only:
            return
        self.optimizer.load_state_dict(ckp['opt_state_dict'])
        if self.scheduler is not None and ckp['scheduler_state_dict'] is not None:
            self.scheduler.load_state_dict(ckp['scheduler_state_dict'])
        if 'grad_scaler' in ckp:
            self.grad_scaler.load_state_dict(ckp['grad_scaler'])
        self.epoch, self.it = ckp['epoch'], ckp['it']
        print(f'INFO: loading checkpoint {ckp_path}, epoch {self.epoch}, it {self.it}')
