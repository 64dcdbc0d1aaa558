"""
MiSiCNet: minimum simplex convolutional network for deep hyperspectral unmixing
(Rasti, Koirala, Scheunders, Chanussot, IEEE TGRS 2022).
Ported from the authors' notebook into the HySUPP model interface.
"""
import logging
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

from src.model.base import BlindUnmixingModel
from src.model.extractors import SiVM

log = logging.getLogger(__name__)

torch.backends.cudnn.enabled = True
torch.backends.cudnn.benchmark = True
dtype = torch.cuda.FloatTensor


def get_noise(input_depth, spatial_size, noise_type="u", var=1.0 / 10):
    shape = [1, input_depth, spatial_size[0], spatial_size[1]]
    net_input = torch.zeros(shape)
    if noise_type == "u":
        net_input.uniform_()
    elif noise_type == "n":
        net_input.normal_()
    else:
        raise ValueError(noise_type)
    return net_input * var


class MiSiCNetArch(nn.Module):
    def __init__(self, L, p, H, W):
        super().__init__()
        self.H, self.W, self.p = H, W, p
        self.layer1 = nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Conv2d(L, 256, 3, 1),
            nn.BatchNorm2d(256),
            nn.LeakyReLU(0.1, inplace=True),
        )
        self.layer2 = nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Conv2d(256, 256, 3, 1),
            nn.BatchNorm2d(256),
            nn.LeakyReLU(0.1, inplace=True),
        )
        self.layerskip = nn.Sequential(
            nn.ReflectionPad2d(0),
            nn.Conv2d(L, 4, 1, 1),
            nn.BatchNorm2d(4),
            nn.LeakyReLU(0.1, inplace=True),
        )
        self.layer3 = nn.Sequential(
            nn.BatchNorm2d(260),
            nn.ReflectionPad2d(1),
            nn.Conv2d(260, 256, 3, 1),
            nn.BatchNorm2d(256),
            nn.LeakyReLU(0.1, inplace=True),
        )
        self.layer4 = nn.Sequential(
            nn.Conv2d(256, p, 1, 1),
            nn.BatchNorm2d(p),
            nn.Softmax(dim=1),
        )
        self.decoderlayer = nn.Linear(p, L, bias=False)

    def forward(self, x):
        x1 = self.layer1(x)
        xskip = self.layerskip(x)
        xcat = torch.cat([x1, xskip], 1)
        abund = self.layer4(self.layer3(xcat))
        abund_flat = abund.view(self.p, self.H * self.W).t()
        recon = self.decoderlayer(abund_flat)
        return abund, recon


class MiSiCNet(BlindUnmixingModel):
    def __init__(self, niters=8000, lr=0.001, exp_weight=0.99, lambd=100.0, *args, **kwargs):
        super().__init__()
        self.niters = niters
        self.lr = lr
        self.exp_weight = exp_weight
        self.lambd = lambd

    def compute_endmembers_and_abundances(self, Y, p, H, W, seed=0, *args, **kwargs):
        tic = time.time()
        torch.manual_seed(seed)
        L, N = Y.shape

        # initialise the decoder with SiVM endmembers
        extractor = SiVM()
        Einit = extractor.extract_endmembers(Y, p, seed=seed)

        net = MiSiCNetArch(L, p, H, W).type(dtype)
        with torch.no_grad():
            net.decoderlayer.weight.copy_(torch.from_numpy(Einit).type(dtype))

        Y_img = Y.reshape(1, L, H, W)
        net_input = torch.from_numpy(Y_img).type(dtype)
        Y_target = torch.from_numpy(Y.T).type(dtype)
        E_sivm = torch.from_numpy(Einit).type(dtype)

        optimizer = torch.optim.Adam(net.parameters(), lr=self.lr)
        out_avg = None
        for ii in tqdm(range(self.niters)):
            optimizer.zero_grad()
            abund, recon = net(net_input)
            E = net.decoderlayer.weight
            # minimum simplex volume regulariser: pull endmembers towards their centroid
            centroid = E_sivm.mean(1, keepdim=True)
            reg = ((E - centroid) ** 2).sum()
            loss = F.mse_loss(recon, Y_target, reduction="sum") / N + self.lambd * reg / (L * p)
            loss.backward()
            optimizer.step()
            # decoder weights must stay non-negative
            net.decoderlayer.weight.data.clamp_(min=0)

            if out_avg is None:
                out_avg = abund.detach()
            else:
                out_avg = out_avg * self.exp_weight + abund.detach() * (1 - self.exp_weight)

        Ahat = out_avg.squeeze(0).cpu().numpy().reshape(p, H * W)
        Ehat = net.decoderlayer.weight.detach().cpu().numpy()
        self.time = time.time() - tic
        log.info(self.print_time())
        return Ehat, Ahat
