import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.nn import functional as F


class HybridLoss(nn.Module):
    def __init__(self, n_ffts):
        super().__init__()
        self.loss_mss_func = MSSLoss(n_ffts)
        self.f0_loss_func = F0L1Loss()

    def forward(self, y_pred, y_true, f0_pred, f0_true):
        loss_mss = self.loss_mss_func(y_pred, y_true)
        loss_f0 = self.f0_loss_func(f0_pred, f0_true)
        return loss_mss, loss_f0


class SSSLoss(nn.Module):
    """
    Single-scale Spectral Loss.
    """

    def __init__(self, n_fft=111, alpha=1.0, overlap=0, eps=1e-7):
        super().__init__()
        self.n_fft = n_fft
        self.alpha = alpha
        self.eps = eps
        self.hop_length = int(n_fft * (1 - overlap))  # 25% of the length
        self.spec = torchaudio.transforms.Spectrogram(n_fft=self.n_fft, hop_length=self.hop_length, power=1,
                                                      normalized=True, center=False)

    def forward(self, x_true, x_pred):
        S_true = self.spec(x_true) + self.eps
        S_pred = self.spec(x_pred) + self.eps

        converge_term = torch.mean(torch.linalg.norm(S_true - S_pred, dim=(1, 2)) / torch.linalg.norm(S_true + S_pred, dim=(1, 2)))

        log_term = F.l1_loss(S_true.log(), S_pred.log())

        loss = converge_term + self.alpha * log_term
        return loss


class MSSLoss(nn.Module):
    """
    Multi-scale Spectral Loss.
    Usage ::
    mssl = MSSLoss([2048, 1024, 512, 256], alpha=1.0, overlap=0.75)
    mssl(y_pred, y_gt)
    input(y_pred, y_gt) : two of torch.tensor w/ shape(batch, 1d-wave)
    output(loss) : torch.tensor(scalar)

    48k: n_ffts=[2048, 1024, 512, 256]
    24k: n_ffts=[1024, 512, 256, 128]
    """

    def __init__(self, n_ffts, alpha=1.0, overlap=0.75, eps=1e-7):
        super().__init__()
        self.losses = nn.ModuleList([SSSLoss(n_fft, alpha, overlap, eps) for n_fft in n_ffts])

    def forward(self, x_pred, x_true):
        x_pred = x_pred[..., :x_true.shape[-1]]
        value = 0.
        for loss in self.losses:
            value += loss(x_true, x_pred)
        return value


class RSSLoss(nn.Module):
    '''
    Random-scale Spectral Loss: every step draws n_scale FFT sizes in [fft_min, fft_max).
    '''

    def __init__(self, fft_min, fft_max, n_scale, alpha=1.0, overlap=0, eps=1e-7, device='cuda'):
        super().__init__()
        self.fft_min = fft_min
        self.fft_max = fft_max
        self.n_scale = n_scale
        self.lossdict = {}
        for n_fft in range(fft_min, fft_max):
            self.lossdict[n_fft] = SSSLoss(n_fft, alpha, overlap, eps).to(device)

    def forward(self, x_pred, x_true):
        value = 0.
        n_ffts = torch.randint(self.fft_min, self.fft_max, (self.n_scale,))
        for n_fft in n_ffts:
            loss_func = self.lossdict[int(n_fft)]
            value += loss_func(x_true, x_pred)
        return value / self.n_scale


class F0L1Loss(nn.Module):
    """
    crepe f0 l1 loss (in semitones, voiced frames only)
    """

    def __init__(self):
        super().__init__()
        self.iteration = 0

    def forward(self, f0_predict, f0_hz_true):
        self.iteration += 1

        if len(f0_hz_true.size()) != 3:
            f0_hz_true = f0_hz_true.unsqueeze(2)

        if torch.sum(f0_hz_true) == 0:
            return torch.zeros_like(f0_hz_true).mean()

        f0_true = 12 * torch.log2(f0_hz_true / 440) + 69
        f0_pred = 12 * torch.log2(f0_predict / 440) + 69
        voiced = (f0_hz_true > 0).float()
        loss = torch.sum(torch.abs(f0_true - f0_pred) * voiced) / torch.clamp(torch.sum(voiced), min=1.0)
        return loss


class F0SlowLoss(nn.Module):
    """
    f0 slow loss
    """

    def __init__(self):
        super().__init__()

    def forward(self, f0_predict):
        loss = F.l1_loss(torch.log(f0_predict) - torch.log(f0_predict[:, :1]), torch.zeros_like(f0_predict))
        return loss
