"""
SUnCNN: sparse unmixing using an unsupervised convolutional neural network
(Rasti, Koirala, IEEE GRSL 2021). Semi-supervised: the spectral library D is
given, the network predicts the (sparse, sum-to-one) abundances of every atom.
"""
import logging
import time

import numpy as np
import torch
import torch.nn as nn
from tqdm import tqdm

from src.model.base import SemiSupervisedUnmixingModel

log = logging.getLogger(__name__)


class SUnCNNArch(nn.Module):
    def __init__(self, L, M):
        super().__init__()
        self.net = nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Conv2d(L, 256, 3),
            nn.BatchNorm2d(256),
            nn.LeakyReLU(0.1, inplace=True),
            nn.ReflectionPad2d(1),
            nn.Conv2d(256, 256, 3),
            nn.BatchNorm2d(256),
            nn.LeakyReLU(0.1, inplace=True),
            nn.ReflectionPad2d(1),
            nn.Conv2d(256, M, 3),
            nn.BatchNorm2d(M),
            nn.Softmax(dim=1),
        )

    def forward(self, x):
        return self.net(x)


class SUnCNN(nn.Module, SemiSupervisedUnmixingModel):
    def __init__(self, niters=20000, lr=0.001, exp_weight=0.99, noisy_input=True, *args, **kwargs):
        super().__init__()
        self.niters = niters
        self.lr = lr
        self.exp_weight = exp_weight
        self.noisy_input = noisy_input

    def compute_abundances(self, Y, D, H, W, seed=0, *args, **kwargs):
        tic = time.time()
        torch.manual_seed(seed)
        L, N = Y.shape
        _, M = D.shape

        self.arch = SUnCNNArch(L, M)
        self.cuda()

        Y_img = torch.from_numpy(Y.reshape(1, L, H, W).astype(np.float32))
        if self.noisy_input:
            net_input = torch.rand_like(Y_img) * 0.1
        else:
            net_input = Y_img.clone()
        net_input = net_input.cuda()
        Y_target = Y_img.cuda()
        D_t = torch.from_numpy(D.astype(np.float32)).cuda()

        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr)
        out_avg = None
        progress = tqdm(range(self.niters))
        for ii in progress:
            optimizer.zero_grad()
            abund = self.arch(net_input)  # 1 x M x H x W
            recon = torch.einsum("lm,bmhw->blhw", D_t, abund)
            loss = 0.5 * ((recon - Y_target) ** 2).sum()
            loss.backward()
            optimizer.step()

            with torch.no_grad():
                if out_avg is None:
                    out_avg = abund.detach()
                else:
                    out_avg = out_avg * self.exp_weight + abund.detach() * (1 - self.exp_weight)
            if ii % 1000 == 0:
                progress.set_postfix_str(f"loss={loss.item():.3e}")

        A_hat = out_avg.squeeze(0).cpu().numpy().reshape(M, H * W)
        del self.arch, net_input, Y_target, D_t
        torch.cuda.empty_cache()
        self.time = time.time() - tic
        log.info(self.print_time())
        return A_hat
