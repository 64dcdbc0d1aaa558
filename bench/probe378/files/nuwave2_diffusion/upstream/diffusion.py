import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def log_snr_to_alpha_sigma(log_snr):
    alpha = torch.sigmoid(log_snr).sqrt()
    sigma = torch.sigmoid(-log_snr).sqrt()
    return alpha, sigma


def cosine_log_snr(t, eps=1e-5):
    # continuous-time cosine schedule expressed as log-SNR
    return -torch.log(torch.special.expm1(1e-4 + 10 * t ** 2))


class Diffusion(nn.Module):
    def __init__(self, max_step, pos_emb_scale, model,
                 logsnr_min=-20.0, logsnr_max=20.0):
        super().__init__()
        self.model = model
        self.max_step = max_step
        self.pos_emb_scale = pos_emb_scale
        self.logsnr_min = logsnr_min
        self.logsnr_max = logsnr_max
        self.b = math.atan(math.exp(-0.5 * logsnr_max))
        self.a = math.atan(math.exp(-0.5 * logsnr_min)) - self.b

    def snr(self, time):
        # t in [0, 1] -> log SNR in [logsnr_max, logsnr_min]
        return -2.0 * torch.log(torch.tan(self.a * time + self.b))

    def sigma(self, log_snr):
        return torch.sqrt(torch.sigmoid(-log_snr))

    def alpha(self, log_snr):
        return torch.sqrt(torch.sigmoid(log_snr))

    def diffusion(self, signal, noise, s, t=None):
        bsize = s.shape[0]
        time = s if t is None else torch.cat([s, t], dim=0)
        log_snr = self.snr(time)
        alpha, sigma = self.alpha(log_snr), self.sigma(log_snr)
        alpha_s, alpha_t = alpha[:bsize], alpha[bsize:]
        sigma_s, sigma_t = sigma[:bsize], sigma[bsize:]

        alpha_s = alpha_s.unsqueeze(-1)
        sigma_s = sigma_s.unsqueeze(-1)
        noised = alpha_s * signal + sigma_s * noise
        if t is None:
            return noised, log_snr

        alpha_t = alpha_t.unsqueeze(-1)
        sigma_t = sigma_t.unsqueeze(-1)
        alpha_ts = alpha_t / alpha_s
        sigma_ts = (sigma_t.square() - alpha_ts.square() * sigma_s.square()).clamp(min=0).sqrt()
        noised_t = alpha_ts * noised + sigma_ts * torch.randn_like(noised)
        return noised_t, log_snr

    def forward(self, signal, wav_l, band, t, z):
        noised, log_snr = self.diffusion(signal, z, t)
        eps = self.model(noised, wav_l, band, self.pos_emb_scale * log_snr)
        return noised, eps

    @torch.no_grad()
    def denoise(self, y, wav_l, band, s, t, h):
        log_snr_s = self.snr(s)
        log_snr_t = self.snr(t)
        alpha_s, sigma_s = self.alpha(log_snr_s), self.sigma(log_snr_s)
        alpha_t, sigma_t = self.alpha(log_snr_t), self.sigma(log_snr_t)

        eps = self.model(y, wav_l, band, self.pos_emb_scale * log_snr_s)
        y0 = (y - sigma_s.unsqueeze(-1) * eps) / alpha_s.unsqueeze(-1)
        y0 = y0.clamp(-1.0, 1.0)

        c = -torch.expm1(log_snr_s - log_snr_t)
        mu = alpha_t.unsqueeze(-1) * (y * (1 - c).unsqueeze(-1) / alpha_s.unsqueeze(-1)
                                      + c.unsqueeze(-1) * y0)
        var = (sigma_t.square() * c).unsqueeze(-1)
        return mu, var

    @torch.no_grad()
    def sample(self, wav_l, band, step, store_intermediate_states=False):
        batch = wav_l.shape[0]
        signal = torch.randn(wav_l.shape, dtype=wav_l.dtype, device=wav_l.device)
        signal_list = []
        h = 1.0 / step
        for i in range(step):
            s = torch.ones((batch,), dtype=wav_l.dtype, device=wav_l.device) * (1 - i * h)
            t = torch.ones((batch,), dtype=wav_l.dtype, device=wav_l.device) * (1 - (i + 1) * h)
            mu, var = self.denoise(signal, wav_l, band, s, t, h)
            if i < step - 1:
                signal = mu + var.sqrt() * torch.randn_like(signal)
            else:
                signal = mu
            signal.clamp_(-1.0, 1.0)
            if store_intermediate_states:
                signal_list.append(signal)
        return signal, signal_list

    @torch.no_grad()
    def sample_noise_schedule(self, wav_l, band, noise_schedule,
                              store_intermediate_states=True):
        batch = wav_l.shape[0]
        signal = torch.randn(wav_l.shape, dtype=wav_l.dtype, device=wav_l.device)
        signal_list = [signal]
        log_snrs = noise_schedule.to(dtype=wav_l.dtype)
        for i in range(len(log_snrs)):
            log_snr_s = log_snrs[i].repeat(batch)
            alpha_s, sigma_s = self.alpha(log_snr_s), self.sigma(log_snr_s)
            eps = self.model(signal, wav_l, band, self.pos_emb_scale * log_snr_s)
            y0 = (signal - sigma_s.unsqueeze(-1) * eps) / alpha_s.unsqueeze(-1)
            y0 = y0.clamp(-1.0, 1.0)
            if i == len(log_snrs) - 1:
                signal = y0
            else:
                log_snr_t = log_snrs[i + 1].repeat(batch)
                alpha_t, sigma_t = self.alpha(log_snr_t), self.sigma(log_snr_t)
                c = -torch.expm1(log_snr_s - log_snr_t)
                mu = alpha_t.unsqueeze(-1) * (signal * (1 - c).unsqueeze(-1)
                                              / alpha_s.unsqueeze(-1)
                                              + c.unsqueeze(-1) * y0)
                var = (sigma_t.square() * c).unsqueeze(-1)
                signal = mu + var.sqrt() * torch.randn_like(signal)
            if store_intermediate_states:
                signal_list.append(signal)
        return signal, signal_list
