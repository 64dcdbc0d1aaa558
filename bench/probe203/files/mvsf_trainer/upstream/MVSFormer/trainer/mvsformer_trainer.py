import collections
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.cuda.amp import autocast, GradScaler
from tqdm import tqdm

from base import BaseTrainer
from models.losses import simple_loss, reg_loss, ce_loss, focal_loss
from utils import (AbsDepthError_metrics, DictAverageMeter, Thres_metrics, tensor2float, tensor2numpy, tocuda,
                   save_images, save_scalars)


def reduce_dict(input_dict, average=True):
    """Reduce the values in the dictionary from all processes so that process with rank 0 has the averaged results."""
    world_size = dist.get_world_size()
    if world_size < 2:
        return input_dict
    with torch.no_grad():
        names = []
        values = []
        # sort the keys so that they are consistent across processes
        for k in sorted(input_dict.keys()):
            names.append(k)
            values.append(input_dict[k])
        values = torch.stack(values, dim=0)
        dist.all_reduce(values)
        if average:
            values /= world_size
        reduced_dict = {k: v for k, v in zip(names, values)}
    return reduced_dict


class Trainer(BaseTrainer):
    """
    Trainer class
    """

    def __init__(self, model, optimizer, config, data_loader, valid_data_loader=None, lr_scheduler=None,
                 writer=None, rank=0, ddp=False, train_sampler=None, debug=False):
        super().__init__(model, optimizer, config, writer=writer, rank=rank, ddp=ddp)
        self.config = config
        self.ddp = ddp
        self.debug = debug
        self.data_loader = data_loader
        self.train_sampler = train_sampler
        self.len_epoch = len(self.data_loader[0])
        self.valid_data_loader = valid_data_loader
        self.do_validation = self.valid_data_loader is not None
        self.lr_scheduler = lr_scheduler
        self.log_step = config['trainer']['logging_every']
        self.depth_type = self.config['arch']['args']['depth_type']
        self.ndepths = self.config['arch']['args']['ndepths']
        self.multi_scale = self.config['data_loader'][0]['args']['multi_scale']
        self.scale_batch_map = self.config['data_loader'][0]['args']['multi_scale_args']['scale_batch_map']
        self.inverse_depth = config['arch']['args']['inverse_depth']

        self.train_metrics = DictAverageMeter()
        self.valid_metrics = DictAverageMeter()

        self.fp16 = config['fp16']
        self.grad_norm = config['trainer'].get('grad_norm', 1.0)
        self.dlossw = config['arch']['dlossw']
        self.bf16 = config.config.get('bf16', False)
        self.amp_dtype = torch.bfloat16 if self.bf16 else torch.float16
        # bf16 does not need loss scaling
        self.scaler = GradScaler(init_scale=32768, enabled=self.fp16 and not self.bf16)

        self.freeze_vit = config['arch']['args']['vit_args'].get('freeze_vit', False)

    def _train_epoch(self, epoch):
        """
        Training logic for an epoch

        :param epoch: Integer, current training epoch.
        :return: A log that contains average loss and metric in this epoch.
        """
        if self.ddp:
            self.train_sampler.set_epoch(epoch)
        self.model.train()
        if self.freeze_vit:
            vit = self.model.module.vit if self.ddp else self.model.vit
            vit.eval()

        dist_group = torch.distributed.group.WORLD if self.ddp else None

        global_step = 0
        scaled_grads = collections.defaultdict(list)
        pre_scale = int(self.scaler.get_scale()) if self.fp16 else None

        # training
        for dl in self.data_loader:
            t_start = time.time()
            for batch_idx, sample in enumerate(tqdm(dl, disable=self.rank != 0)):
                num_stage = 3 if self.config['data_loader'][0]['args'].get('stage3', False) else 4

                sample_cuda = tocuda(sample)
                depth_gt_ms = sample_cuda["depth"]
                mask_ms = sample_cuda["mask"]
                imgs, cam_params = sample_cuda["imgs"], sample_cuda["proj_matrices"]
                depth_values = sample_cuda["depth_values"]
                depth_interval = depth_values[:, 1] - depth_values[:, 0]

                self.optimizer.zero_grad()

                # gradient accumulate
                if self.multi_scale:
                    ga = self.scale_batch_map[str(imgs.shape[3])] // imgs.shape[0]
                else:
                    ga = 1

                with autocast(enabled=self.fp16, dtype=self.amp_dtype):
                    outputs = self.model.forward(imgs, cam_params, depth_values)

                if not self.fp16:
                    outputs = {k: v for k, v in outputs.items()}
                loss_dict = {}
                depth_est = outputs["refined_depth"].detach() if "refined_depth" in outputs else outputs["depth"].detach()
                if self.depth_type == 'ce':
                    loss, depth_loss = ce_loss(outputs, depth_gt_ms, mask_ms, dlossw=self.dlossw,
                                               depth_values=depth_values)
                elif self.depth_type == 'mixup_ce':
                    loss, depth_loss = focal_loss(outputs, depth_gt_ms, mask_ms, dlossw=self.dlossw,
                                                  depth_values=depth_values, inverse_depth=self.inverse_depth)
                else:
                    loss, depth_loss = reg_loss(outputs, depth_gt_ms, mask_ms, dlossw=self.dlossw,
                                                depth_values=depth_values)
                loss = loss / ga
                loss_dict['loss'] = loss.detach()
                loss_dict['depth_loss'] = depth_loss.detach()

                self.scaler.scale(loss).backward()
                if self.debug:
                    # DEBUG:scaled grad
                    with torch.no_grad():
                        for group in self.optimizer.param_groups:
                            for param in group["params"]:
                                if param.grad is None:
                                    continue
                                if param.grad.is_sparse:
                                    if param.grad.dtype is torch.float16:
                                        param.grad = param.grad.coalesce()
                                    to_unscale = param.grad._values()
                                else:
                                    to_unscale = param.grad
                                v = to_unscale.clone().abs().max()
                                if torch.isinf(v) or torch.isnan(v):
                                    print('Rank', str(self.rank) + ':', 'INF in', group['layer_name'], 'of step',
                                          global_step, '!!!')
                                scaled_grads[group['layer_name']].append(v.item() / self.scaler.get_scale())

                if (batch_idx + 1) % ga == 0:
                    self.scaler.unscale_(self.optimizer)
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_norm)
                    self.scaler.step(self.optimizer)
                    self.scaler.update()
                    self.optimizer.zero_grad()
                    if self.lr_scheduler is not None:
                        self.lr_scheduler.step()

                global_step = (epoch - 1) * self.len_epoch + batch_idx

                if self.ddp:
                    loss_dict = reduce_dict(loss_dict)

                if self.rank == 0:
                    if batch_idx % self.log_step == 0:
                        scalar_outputs = {"loss": loss_dict['loss'].item(),
                                          "depth_loss": loss_dict['depth_loss'].item(),
                                          "lr": self.optimizer.param_groups[0]['lr']}
                        if self.fp16:
                            scalar_outputs['loss_scale'] = self.scaler.get_scale()
                        save_scalars(self.writer, 'train', scalar_outputs, global_step)
                        mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3
                        self.logger.info(
                            "Epoch {}/{}, Iter {}/{}, lr {:.6f}, loss={:.4f}, depth_loss={:.4f}, mem={:.2f}G, {:.2f}s/it".format(
                                epoch, self.epochs, batch_idx, len(dl), self.optimizer.param_groups[0]['lr'],
                                scalar_outputs['loss'], scalar_outputs['depth_loss'], mem_gb,
                                (time.time() - t_start) / (batch_idx + 1)))

                    if batch_idx % (self.log_step * 10) == 0:
                        image_outputs = {"depth_est": depth_est * mask_ms["stage{}".format(num_stage)],
                                         "depth_gt": depth_gt_ms["stage{}".format(num_stage)],
                                         "ref_img": imgs[:, 0]}
                        save_images(self.writer, 'train', tensor2numpy(image_outputs), global_step)

                del sample_cuda, outputs, loss

        if self.debug and self.rank == 0:
            np.save(os.path.join(self.checkpoint_dir, 'scaled_grads_e{}.npy'.format(epoch)), dict(scaled_grads))

        val_metrics = {}
        if self.do_validation:
            val_metrics = self._valid_epoch(epoch)

        torch.cuda.empty_cache()
        return val_metrics

    def _valid_epoch(self, epoch):
        """
        Validate after training an epoch

        :param epoch: Integer, current training epoch.
        :return: A log that contains information about validation
        """
        self.model.eval()
        self.valid_metrics.reset()

        with torch.no_grad():
            for val_data_idx, dl in enumerate(self.valid_data_loader):
                for batch_idx, sample in enumerate(tqdm(dl, disable=self.rank != 0)):
                    sample_cuda = tocuda(sample)
                    depth_gt_ms = sample_cuda["depth"]
                    mask_ms = sample_cuda["mask"]
                    num_stage = len(self.ndepths)
                    depth_gt = depth_gt_ms["stage{}".format(num_stage)]
                    mask = mask_ms["stage{}".format(num_stage)]

                    imgs, cam_params = sample_cuda["imgs"], sample_cuda["proj_matrices"]
                    depth_values = sample_cuda["depth_values"]

                    start_event = torch.cuda.Event(enable_timing=True)
                    end_event = torch.cuda.Event(enable_timing=True)
                    start_event.record()
                    with autocast(enabled=self.fp16, dtype=self.amp_dtype):
                        outputs = self.model.forward(imgs, cam_params, depth_values)
                    end_event.record()
                    end_event.synchronize()
                    forward_ms = start_event.elapsed_time(end_event)

                    depth_est = outputs["depth"].float()
                    di = depth_values[:, 1] - depth_values[:, 0]
                    scalar_outputs = {"abs_depth_error": AbsDepthError_metrics(depth_est, depth_gt, mask > 0.5),
                                      "thres2mm_error": Thres_metrics(depth_est, depth_gt, mask > 0.5, 2),
                                      "thres4mm_error": Thres_metrics(depth_est, depth_gt, mask > 0.5, 4),
                                      "thres8mm_error": Thres_metrics(depth_est, depth_gt, mask > 0.5, 8),
                                      "thres1interval_error": Thres_metrics(depth_est, depth_gt, mask > 0.5,
                                                                            float(di.mean())),
                                      "forward_ms": torch.tensor(forward_ms, device=depth_est.device)}

                    if self.ddp:
                        scalar_outputs = reduce_dict(scalar_outputs)
                    scalar_outputs = tensor2float(scalar_outputs)
                    self.valid_metrics.update(scalar_outputs)

        if self.rank == 0:
            val_metrics = self.valid_metrics.mean()
            save_scalars(self.writer, 'val', val_metrics, epoch)
            self.logger.info("Validation epoch {}: {}".format(epoch, val_metrics))
        else:
            val_metrics = {}

        return val_metrics
