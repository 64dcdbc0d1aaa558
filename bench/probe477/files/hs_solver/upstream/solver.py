import os
import time
from collections import defaultdict

import numpy as np
import soundfile as sf
import torch
import torch.nn as nn
import torch.nn.functional as F
from loguru import logger
from torch.utils.tensorboard import SummaryWriter

from model import Encoder, CarrierDecoder, MsgDecoder, Discriminator
from stft import STFT
from utils import snr, pesq_score


class Solver(object):
    def __init__(self, train_loader, val_loader, test_loader, config):
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.test_loader = test_loader
        self.config = config
        self.cuda = config.cuda
        self.gpu_ids = config.gpu_ids
        self.n_messages = config.n_messages
        self.lambda_carrier_loss = config.lambda_carrier_loss
        self.lambda_msg_loss = config.lambda_msg_loss
        self.run_dir = config.run_dir
        self.ckpt_dir = os.path.join(self.run_dir, 'ckpt')
        os.makedirs(self.ckpt_dir, exist_ok=True)
        self.writer = SummaryWriter(os.path.join(self.run_dir, 'tb'))

        self.stft = STFT(filter_length=1024, hop_length=256)
        self.cur_iter = 0
        self.loss_type = 'mse'
        self.build_models()

    def build_models(self):
        self.enc_c = Encoder(conv_dim=64, n_layers=self.config.enc_n_layers, block_type=self.config.block_type)
        self.dec_c = CarrierDecoder(conv_dim=64 * (self.n_messages + 1),
                                    n_layers=self.config.dec_c_n_layers, block_type=self.config.block_type)
        self.dec_m = nn.ModuleList([MsgDecoder(conv_dim=64, n_layers=self.config.dec_m_n_layers,
                                               block_type=self.config.block_type)
                                    for _ in range(self.n_messages)])
        self.enc_m = nn.ModuleList([Encoder(conv_dim=64, n_layers=self.config.enc_n_layers,
                                            block_type=self.config.block_type)
                                    for _ in range(self.n_messages)])
        if self.config.adv:
            self.discriminator = Discriminator()

        if self.cuda:
            self.enc_c = self.enc_c.cuda()
            self.dec_c = self.dec_c.cuda()
            self.dec_m = self.dec_m.cuda()
            self.enc_m = self.enc_m.cuda()
            self.stft = self.stft.cuda()
            if self.config.adv:
                self.discriminator = self.discriminator.cuda()
            if len(self.gpu_ids) > 1:
                self.enc_c = nn.DataParallel(self.enc_c, device_ids=self.gpu_ids)
                self.dec_c = nn.DataParallel(self.dec_c, device_ids=self.gpu_ids)

        params = list(self.enc_c.parameters()) + list(self.dec_c.parameters()) + \
            list(self.dec_m.parameters()) + list(self.enc_m.parameters())
        self.opt = torch.optim.Adam(params, lr=self.config.lr)
        if self.config.adv:
            self.opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=self.config.lr)
        n_params = sum(p.numel() for p in params)
        logger.info(f'built models: {n_params / 1e6:.2f}M parameters')

    def reset_grad(self):
        self.opt.zero_grad()
        if self.config.adv:
            self.opt_d.zero_grad()

    def train_mode(self):
        self.enc_c.train()
        self.dec_c.train()
        self.dec_m.train()
        self.enc_m.train()

    def eval_mode(self):
        self.enc_c.eval()
        self.dec_c.eval()
        self.dec_m.eval()
        self.enc_m.eval()

    def save_models(self, suffix=''):
        logger.info(f'saving model to: {self.ckpt_dir}')
        state = {
            'enc_c': self.enc_c.state_dict(),
            'dec_c': self.dec_c.state_dict(),
            'dec_m': self.dec_m.state_dict(),
            'enc_m': self.enc_m.state_dict(),
            'opt': self.opt.state_dict(),
            'cur_iter': self.cur_iter,
        }
        torch.save(state, os.path.join(self.ckpt_dir, f'{suffix}.ckpt'))

    def load_models(self, ckpt_path):
        logger.info(f'loading models from: {ckpt_path}')
        ckpt = torch.load(ckpt_path, map_location=lambda storage, loc: storage)
        self.enc_c.load_state_dict(ckpt['enc_c'])
        self.dec_c.load_state_dict(ckpt['dec_c'])
        self.dec_m.load_state_dict(ckpt['dec_m'])
        self.enc_m.load_state_dict(ckpt['enc_m'])
        if 'opt' in ckpt:
            self.opt.load_state_dict(ckpt['opt'])
        self.cur_iter = ckpt.get('cur_iter', 0)

    def to_device(self, x):
        return x.cuda(non_blocking=True) if self.cuda else x

    def forward(self, carrier, carrier_phase, msg):
        """carrier: B x 1 x F x T magnitude, msg: list of B x 1 x F x T message spectrograms"""
        assert type(carrier) == torch.Tensor and type(msg) == list
        batch_size = carrier.shape[0]

        # encode the carrier
        carrier_enc = self.enc_c(carrier)

        # encode messages
        msg_enc = [self.enc_m[i](msg[i]) for i in range(self.n_messages)]
        merged_enc = torch.cat((carrier_enc, *msg_enc), dim=1)

        # decode the carrier
        carrier_reconst = self.dec_c(merged_enc)

        # add noise between encoder and decoder (robustness)
        if self.config.noise > 0 and self.training:
            noise = torch.randn(carrier_reconst.shape) * self.config.noise
            if self.cuda:
                noise = noise.cuda()
            carrier_reconst = carrier_reconst + noise

        # decode messages from the reconstructed carrier
        msg_reconst = [self.dec_m[i](carrier_reconst) for i in range(self.n_messages)]
        return carrier_reconst, msg_reconst

    @property
    def training(self):
        return self.enc_c.training

    def reconstruction_loss(self, input, target):
        if self.loss_type == 'mse':
            return F.mse_loss(input, target)
        return F.l1_loss(input, target)

    def step(self, batch, train=True):
        carrier, carrier_phase, msg, msg_phase = batch
        carrier, carrier_phase = self.to_device(carrier), self.to_device(carrier_phase)
        msg = [self.to_device(m) for m in msg]
        carrier_reconst, msg_reconst = self.forward(carrier, carrier_phase, msg)

        carrier_loss = self.reconstruction_loss(carrier_reconst, carrier)
        msg_loss = sum(self.reconstruction_loss(msg_reconst[i], msg[i]) for i in range(self.n_messages))
        loss = self.lambda_carrier_loss * carrier_loss + self.lambda_msg_loss * msg_loss

        losses = {'carrier_loss': carrier_loss.item(), 'msg_loss': msg_loss.item()}
        if self.config.adv:
            g_fake = self.discriminator(carrier_reconst)
            g_loss = F.binary_cross_entropy_with_logits(g_fake, torch.ones_like(g_fake))
            loss = loss + 0.1 * g_loss
            losses['g_loss'] = g_loss.item()

        if train:
            self.reset_grad()
            loss.backward()
            self.opt.step()
            if self.config.adv:
                d_real = self.discriminator(carrier)
                d_fake = self.discriminator(carrier_reconst.detach())
                d_loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \
                    F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
                self.opt_d.zero_grad()
                d_loss.backward()
                self.opt_d.step()
                losses['d_loss'] = d_loss.item()
        losses['loss'] = loss.item()
        return losses

    def train(self):
        logger.info('start training')
        best_val = float('inf')
        for epoch in range(self.config.epochs):
            self.train_mode()
            start = time.time()
            epoch_losses = defaultdict(list)
            for i, batch in enumerate(self.train_loader):
                losses = self.step(batch, train=True)
                self.cur_iter += 1
                for k, v in losses.items():
                    epoch_losses[k].append(v)
                    self.writer.add_scalar(f'train/{k}', v, self.cur_iter)
                if i % self.config.print_every == 0:
                    logger.info(f'epoch {epoch} iter {i}/{len(self.train_loader)} ' +
                                ' '.join(f'{k}: {v:.4f}' for k, v in losses.items()))
                if i >= self.config.num_iters:
                    break
            if self.cuda:
                logger.info(f'epoch {epoch} took {time.time() - start:.1f}s, '
                            f'max mem {torch.cuda.max_memory_allocated() / 2 ** 30:.2f}GB')

            val_loss = self.validate()
            if val_loss < best_val:
                best_val = val_loss
                self.save_models('best')
            if epoch % self.config.save_model_every == 0:
                self.save_models(f'epoch_{epoch}')
            torch.cuda.empty_cache()

    @torch.no_grad()
    def validate(self):
        self.eval_mode()
        losses = defaultdict(list)
        for batch in self.val_loader:
            for k, v in self.step(batch, train=False).items():
                losses[k].append(v)
        mean = {k: float(np.mean(v)) for k, v in losses.items()}
        for k, v in mean.items():
            self.writer.add_scalar(f'val/{k}', v, self.cur_iter)
        logger.info('validation: ' + ' '.join(f'{k}: {v:.4f}' for k, v in mean.items()))
        return mean['loss']

    @torch.no_grad()
    def test(self):
        self.eval_mode()
        scores = defaultdict(list)
        for batch in self.test_loader:
            carrier, carrier_phase, msg, msg_phase = batch
            carrier_d, phase_d = self.to_device(carrier), self.to_device(carrier_phase)
            msg_d = [self.to_device(m) for m in msg]
            carrier_reconst, msg_reconst = self.forward(carrier_d, phase_d, msg_d)
            carrier_wav = self.stft.inverse(carrier_d.squeeze(1), phase_d.squeeze(1)).cpu().numpy()
            carrier_reconst_wav = self.stft.inverse(carrier_reconst.squeeze(1), phase_d.squeeze(1)).cpu().numpy()
            for i in range(self.n_messages):
                msg_wav = self.stft.inverse(msg_d[i].squeeze(1), self.to_device(msg_phase[i]).squeeze(1))
                msg_reconst_wav = self.stft.inverse(msg_reconst[i].squeeze(1),
                                                    self.to_device(msg_phase[i]).squeeze(1))
                scores['msg_snr'].append(snr(msg_wav.cpu().numpy(), msg_reconst_wav.cpu().numpy()))
                scores['msg_pesq'].append(pesq_score(msg_wav.cpu().numpy(), msg_reconst_wav.cpu().numpy()))
            scores['carrier_snr'].append(snr(carrier_wav, carrier_reconst_wav))
            scores['carrier_pesq'].append(pesq_score(carrier_wav, carrier_reconst_wav))
        for k, v in scores.items():
            logger.info(f'test {k}: {np.mean(v):.3f} +- {np.std(v):.3f}')

    @torch.no_grad()
    def sample_examples(self, n=10, subdir='samples'):
        self.eval_mode()
        out_dir = os.path.join(self.run_dir, subdir)
        os.makedirs(out_dir, exist_ok=True)
        batch = next(iter(self.test_loader))
        carrier, carrier_phase, msg, msg_phase = batch
        carrier_d, phase_d = self.to_device(carrier[:n]), self.to_device(carrier_phase[:n])
        msg_d = [self.to_device(m[:n]) for m in msg]
        carrier_reconst, msg_reconst = self.forward(carrier_d, phase_d, msg_d)
        wav_c = self.stft.inverse(carrier_d.squeeze(1), phase_d.squeeze(1)).cpu().numpy()
        wav_cr = self.stft.inverse(carrier_reconst.squeeze(1), phase_d.squeeze(1)).cpu().numpy()
        for j in range(wav_c.shape[0]):
            sf.write(os.path.join(out_dir, f'{j}_carrier.wav'), wav_c[j], 16000)
            sf.write(os.path.join(out_dir, f'{j}_carrier_reconst.wav'), wav_cr[j], 16000)
        logger.info(f'wrote {wav_c.shape[0]} examples to {out_dir}')
