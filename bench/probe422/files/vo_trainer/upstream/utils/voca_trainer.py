'''
VOCA trainer (PyTorch port): mixed-precision training loop, validation, checkpointing and
periodic rendering of validation sequences.
'''

import os
import time
import logging
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

from utils.voca_model import VOCALoss
from utils.rendering import render_sequence_meshes

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML = True
except Exception:  # pynvml missing or no NVIDIA driver
    _NVML = False

logger = logging.getLogger('voca')


def gpu_utilization(device_index):
    """Returns (utilization %, used MiB) as reported by NVML, or (None, None)."""
    if not _NVML:
        return None, None
    handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    return util.gpu, mem.used // (1024 * 1024)


class VOCATrainer(object):
    def __init__(self, config, model, batcher, device):
        self.config = config
        self.model = model
        self.batcher = batcher
        self.device = device
        self.loss_fn = VOCALoss(config)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config['learning_rate'],
                                          betas=(config['adam_beta1_value'], 0.999))
        decay_steps = max(1, self.batcher.get_num_batches(config['batch_size']))
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=decay_steps,
                                                         gamma=config['decay_rate'])
        self.use_amp = config['mixed_precision']
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)
        self.writer = SummaryWriter(os.path.join(config['checkpoint_dir'], 'summaries'))
        self.global_step = 0
        self.start_epoch = 1

        # fp32 matmuls may use TF32 on Ampere; the loss is insensitive to it
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        torch.backends.cudnn.benchmark = True

        self.train_loader = DataLoader(self.batcher.train_dataset(), batch_size=config['batch_size'],
                                       shuffle=True, drop_last=True, num_workers=config['num_workers'],
                                       pin_memory=True, persistent_workers=config['num_workers'] > 0)
        self.val_loader = DataLoader(self.batcher.val_dataset(), batch_size=config['batch_size'],
                                     shuffle=False, num_workers=config['num_workers'], pin_memory=True)

    def _to_device(self, batch):
        processed_audio, face_vertices, face_templates, subject_idx = batch
        return (processed_audio.to(self.device, non_blocking=True),
                face_vertices.to(self.device, non_blocking=True),
                face_templates.to(self.device, non_blocking=True),
                subject_idx.to(self.device, non_blocking=True))

    def _training_step(self, batch):
        processed_audio, face_vertices, face_templates, subject_idx = self._to_device(batch)
        self.optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=self.use_amp):
            predicted, expression_offset = self.model(processed_audio, subject_idx, face_templates)
            loss, details = self.loss_fn(predicted.float(), face_vertices, expression_offset.float())
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=10.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        return loss.detach(), details

    @torch.no_grad()
    def _validation_loss(self):
        self.model.eval()
        losses = []
        for batch in self.val_loader:
            processed_audio, face_vertices, face_templates, _ = self._to_device(batch)
            num_subjects = self.model.num_training_subjects
            # evaluate the validation subjects conditioned on every training subject
            for subj in range(num_subjects):
                condition = torch.full((processed_audio.shape[0],), subj, dtype=torch.long, device=self.device)
                with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=torch.float16):
                    predicted, expression_offset = self.model(processed_audio, condition, face_templates)
                loss, _ = self.loss_fn(predicted.float(), face_vertices, expression_offset.float())
                losses.append(loss.item())
        self.model.train()
        return float(np.mean(losses))

    def train(self):
        num_epochs = self.config['epoch_num']
        self.model.train()
        for epoch in range(self.start_epoch, num_epochs + 1):
            start_evt = torch.cuda.Event(enable_timing=True)
            stop_evt = torch.cuda.Event(enable_timing=True)
            torch.cuda.reset_peak_memory_stats(self.device)
            start_evt.record()
            epoch_losses = []
            for iter, batch in enumerate(self.train_loader):
                loss, details = self._training_step(batch)
                self.global_step += 1
                epoch_losses.append(loss.item())

                if iter % 50 == 0:
                    logger.info('Epoch: %d | Iter: %d | Global Step: %d | Loss: %.6f | LR: %.2e' % (
                        epoch, iter, self.global_step, loss.item(), self.scheduler.get_last_lr()[0]))
                    for k, v in details.items():
                        self.writer.add_scalar('train/%s' % k, v.item(), self.global_step)
                    self.writer.add_scalar('train/loss', loss.item(), self.global_step)

                if iter % 100 == 0:
                    val_loss = self._validation_loss()
                    logger.info('Validation loss: %.6f' % val_loss)
                    self.writer.add_scalar('val/loss', val_loss, self.global_step)

            stop_evt.record()
            torch.cuda.synchronize()
            epoch_ms = start_evt.elapsed_time(stop_evt)
            peak_mb = torch.cuda.max_memory_allocated(self.device) / 2 ** 20
            util, used = gpu_utilization(self.device.index or 0)
            logger.info('Epoch %d done in %.1fs, mean loss %.6f, peak memory %.0f MiB, GPU util %s%%, used %s MiB' % (
                epoch, epoch_ms / 1000.0, np.mean(epoch_losses), peak_mb, util, used))

            if epoch % 10 == 0 or epoch == num_epochs:
                self.save_checkpoint(epoch)
                self._render_validation_sequences(epoch)

    def save_checkpoint(self, epoch):
        ckpt_dir = os.path.join(self.config['checkpoint_dir'], 'checkpoints')
        os.makedirs(ckpt_dir, exist_ok=True)
        fname = os.path.join(ckpt_dir, 'gstep_%06d.pt' % self.global_step)
        torch.save({'epoch': epoch,
                    'global_step': self.global_step,
                    'model': self.model.state_dict(),
                    'optimizer': self.optimizer.state_dict(),
                    'scaler': self.scaler.state_dict(),
                    'cuda_rng_state': torch.cuda.get_rng_state()}, fname)
        logger.info('Saved checkpoint %s' % fname)

    def load_checkpoint(self, fname):
        ckpt = torch.load(fname, map_location=self.device)
        self.model.load_state_dict(ckpt['model'])
        self.optimizer.load_state_dict(ckpt['optimizer'])
        self.scaler.load_state_dict(ckpt['scaler'])
        torch.cuda.set_rng_state(ckpt['cuda_rng_state'])
        self.start_epoch = ckpt['epoch'] + 1
        self.global_step = ckpt['global_step']
        logger.info('Resumed from %s (epoch %d)' % (fname, ckpt['epoch']))

    @torch.no_grad()
    def _render_validation_sequences(self, epoch):
        self.model.eval()
        out_dir = os.path.join(self.config['checkpoint_dir'], 'videos', 'epoch_%03d' % epoch)
        os.makedirs(out_dir, exist_ok=True)
        for seq_idx, (processed_audio, templates, subject_idx, audio) in enumerate(
                self.batcher.get_validation_sequences(self.config['num_render_sequences'])):
            processed_audio = torch.from_numpy(processed_audio).float().to(self.device)
            templates = torch.from_numpy(templates).to(self.device)
            subject_idx = torch.from_numpy(subject_idx).long().to(self.device)
            with torch.cuda.amp.autocast(self.use_amp):
                predicted, _ = self.model(processed_audio, subject_idx, templates)
            render_sequence_meshes(audio, predicted.float().cpu().numpy(), out_dir, 'seq_%02d' % seq_idx)
        self.model.train()
