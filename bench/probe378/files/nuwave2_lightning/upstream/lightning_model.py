from argparse import Namespace
import copy
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from omegaconf import OmegaConf as OC

import dataloader
from model import NuWave2 as model
from diffusion import Diffusion
from utils.stft import STFTMag


class STFTLoss(nn.Module):
    def __init__(self, nfft=1024, hop=256):
        super().__init__()
        self.stft = STFTMag(nfft, hop)

    def forward(self, x, y):
        x_mag = self.stft(x)
        y_mag = self.stft(y)
        sc = torch.norm(y_mag - x_mag, p='fro') / (torch.norm(y_mag, p='fro') + 1e-7)
        mag = F.l1_loss(torch.log(y_mag + 1e-7), torch.log(x_mag + 1e-7))
        return sc + mag


class NuWave2(pl.LightningModule):
    def __init__(self, hparams, train=True):
        super().__init__()
        self.save_hyperparameters(hparams)
        self.model = model(hparams)
        self.norm = nn.L1Loss()
        self.loss = nn.MSELoss()
        self.stft = STFTMag(hparams.audio.filter_length, hparams.audio.hop_length)
        self.stft_loss = STFTLoss(hparams.audio.filter_length, hparams.audio.hop_length)
        self.diffusion = Diffusion(
            hparams.dpm.max_step,
            hparams.dpm.pos_emb_scale,
            self.model)
        self.ema_decay = hparams.train.ema
        self.ema_model = None

    def forward(self, wav, wav_l, band, t):
        z = torch.randn(wav.shape, dtype=wav.dtype, device=wav.device)
        _, eps = self.diffusion(wav, wav_l, band, t, z)
        return eps

    @torch.no_grad()
    def inference(self, wav_l, band, step, noise_schedule=None):
        if noise_schedule is None:
            signal, signal_list = self.diffusion.sample(wav_l, band, step)
        else:
            signal, signal_list = self.diffusion.sample_noise_schedule(
                wav_l, band, noise_schedule.to(wav_l.device))
        return signal, signal_list

    def common_step(self, wav, wav_l, band, t):
        noise = torch.randn(wav.shape, dtype=wav.dtype, device=wav.device)
        wav_noisy, eps_pred = self.diffusion(wav, wav_l, band, t, noise)
        loss = self.loss(eps_pred, noise)
        return loss, wav, wav_noisy, noise, eps_pred

    def training_step(self, batch, batch_nb):
        wav, wav_l, band = batch
        t = ((1 - torch.rand(1, dtype=wav.dtype, device=wav.device))
             + torch.arange(wav.shape[0], dtype=wav.dtype, device=wav.device)
             / wav.shape[0]) % 1
        loss, *_ = self.common_step(wav, wav_l, band, t)

        self.log('train/loss', loss, sync_dist=True)
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if self.ema_model is None:
            self.ema_model = copy.deepcopy(self.model).eval()
            for p in self.ema_model.parameters():
                p.requires_grad_(False)
        with torch.no_grad():
            for p_ema, p in zip(self.ema_model.parameters(), self.model.parameters()):
                p_ema.mul_(self.ema_decay).add_(p.detach(), alpha=1 - self.ema_decay)

    def validation_step(self, batch, batch_nb):
        wav, wav_l, band = batch
        t = ((1 - torch.rand(1, dtype=wav.dtype, device=wav.device))
             + torch.arange(wav.shape[0], dtype=wav.dtype, device=wav.device)
             / wav.shape[0]) % 1
        loss, wav, wav_noisy, z, z_recon = self.common_step(wav, wav_l, band, t)

        self.log('val/loss', loss, sync_dist=True)
        if batch_nb == 0:
            i = torch.randint(0, wav.shape[0], (1,)).item()
            wav_recon, *_ = self.inference(wav_l[i].unsqueeze(0), band[i].unsqueeze(0),
                                           self.hparams.dpm.infer_step,
                                           eval(self.hparams.dpm.infer_schedule))

            wav_recon = torch.clamp(wav_recon, min=-1, max=1 - torch.finfo(torch.float16).eps)
            self.trainer.logger.log_spectrogram(wav[i], wav_l[i], wav_recon[0],
                                                self.current_epoch)
            self.trainer.logger.log_audio(wav[i], wav_l[i], wav_recon[0],
                                          self.current_epoch)

        return {
            'val_loss': loss,
        }

    def validation_epoch_end(self, outputs):
        losses = torch.stack([o['val_loss'] for o in outputs])
        self.log('val_loss', losses.mean(), sync_dist=True)

    def test_step(self, batch, batch_nb):
        wav, wav_l, band = batch
        wav_recon, *_ = self.inference(wav_l, band, self.hparams.dpm.infer_step,
                                       eval(self.hparams.dpm.infer_schedule))
        snr = self.snr(wav_recon, wav)
        lsd = self.lsd(wav_recon, wav)
        self.log('test/snr', snr, sync_dist=True)
        self.log('test/lsd', lsd, sync_dist=True)
        return {'snr': snr, 'lsd': lsd}

    def snr(self, pred, target):
        return (20 * torch.log10(torch.norm(target, dim=-1)
                                 / torch.norm(pred - target, dim=-1).clamp(min=1e-8))).mean()

    def lsd(self, pred, target):
        sp = torch.log10(self.stft(pred).square().clamp(1e-8))
        st = torch.log10(self.stft(target).square().clamp(1e-8))
        return (sp - st).square().mean(dim=1).sqrt().mean()

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(),
                               lr=self.hparams.train.lr,
                               eps=self.hparams.train.opt_eps,
                               betas=(self.hparams.train.beta1,
                                      self.hparams.train.beta2),
                               weight_decay=self.hparams.train.weight_decay)
        return opt

    def train_dataloader(self):
        return dataloader.create_vctk_dataloader(self.hparams, 0)

    def val_dataloader(self):
        return dataloader.create_vctk_dataloader(self.hparams, 1)

    def test_dataloader(self):
        return dataloader.create_vctk_dataloader(self.hparams, 2)

    def on_save_checkpoint(self, checkpoint):
        if self.ema_model is not None:
            checkpoint['ema_state_dict'] = self.ema_model.state_dict()

    def on_load_checkpoint(self, checkpoint):
        if 'ema_state_dict' in checkpoint:
            self.ema_model = copy.deepcopy(self.model).eval()
            self.ema_model.load_state_dict(checkpoint['ema_state_dict'])
