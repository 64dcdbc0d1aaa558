"""
Spiking building blocks shared by the ResNet-19 / VGG-SNN models of the TET and tdBN experiments.

Tensors that flow between spiking layers are [B, T, ...]; SeqToANNContainer folds T into the batch
so that ordinary conv / BN layers can be reused.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SeqToANNContainer(nn.Module):
    # This code is from spikingjelly https://github.com/fangwei123456/spikingjelly
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1:
            self.module = args[0]
        else:
            self.module = nn.Sequential(*args)

    def forward(self, x_seq: torch.Tensor):
        y_shape = [x_seq.shape[0], x_seq.shape[1]]
        y_seq = self.module(x_seq.flatten(0, 1).contiguous())
        y_shape.extend(y_seq.shape[1:])
        return y_seq.view(y_shape)


class Layer(nn.Module):
    def __init__(self, in_plane, out_plane, kernel_size, stride, padding):
        super(Layer, self).__init__()
        self.fwd = SeqToANNContainer(
            nn.Conv2d(in_plane, out_plane, kernel_size, stride, padding),
            nn.BatchNorm2d(out_plane)
        )
        self.act = LIFSpike()

    def forward(self, x):
        x = self.fwd(x)
        x = self.act(x)
        return x


class APLayer(nn.Module):
    def __init__(self, kernel_size):
        super(APLayer, self).__init__()
        self.fwd = SeqToANNContainer(
            nn.AvgPool2d(kernel_size),
        )
        self.act = LIFSpike()

    def forward(self, x):
        x = self.fwd(x)
        x = self.act(x)
        return x


class ZIF(torch.autograd.Function):
    """Heaviside forward, triangle surrogate backward (gamma controls the width)."""

    @staticmethod
    def forward(ctx, input, gama):
        out = (input > 0).float()
        L = torch.tensor([gama])
        ctx.save_for_backward(input, out, L)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (input, out, others) = ctx.saved_tensors
        gama = others[0].item()
        grad_input = grad_output.clone()
        tmp = (1 / gama) * (1 / gama) * ((gama - input.abs()).clamp(min=0))
        grad_input = grad_input * tmp
        return grad_input, None


class AtanSpike(torch.autograd.Function):
    """Heaviside forward with an arctan surrogate; runs in fp32 even under autocast, the threshold
    comparison is unreliable in fp16 for membrane potentials close to v_th."""

    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x, alpha: float = 2.0):
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return torch.heaviside(x, torch.zeros_like(x))

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        alpha = ctx.alpha
        sg = alpha / 2 / (1 + (math.pi / 2 * alpha * x).pow_(2))
        return grad_output * sg, None


class LIFSpike(nn.Module):
    def __init__(self, thresh=1.0, tau=0.5, gama=1.0, surrogate='zif'):
        super(LIFSpike, self).__init__()
        self.thresh = thresh
        self.tau = tau
        self.gama = gama
        self.surrogate = surrogate

    def spike(self, x):
        if self.surrogate == 'atan':
            return AtanSpike.apply(x, 2.0)
        return ZIF.apply(x, self.gama)

    def forward(self, x):
        mem = 0
        spike_pot = []
        T = x.shape[1]
        for t in range(T):
            mem = mem * self.tau + x[:, t, ...]
            spike = self.spike(mem - self.thresh)
            mem = (1 - spike) * mem
            spike_pot.append(spike)
        return torch.stack(spike_pot, dim=1)


class tdBatchNorm(nn.BatchNorm2d):
    """Threshold-dependent BatchNorm (tdBN): normalises over (T, B, H, W) jointly and scales by alpha * V_th."""

    def __init__(self, num_features, eps=1e-05, momentum=0.1, alpha=1.0, v_th=1.0, affine=True,
                 track_running_stats=True):
        super(tdBatchNorm, self).__init__(num_features, eps, momentum, affine, track_running_stats)
        self.alpha = alpha
        self.v_th = v_th

    def forward(self, input):
        # input: [B, T, C, H, W]
        exponential_average_factor = 0.0

        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                self.num_batches_tracked += 1
                if self.momentum is None:  # use cumulative moving average
                    exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                else:  # use exponential moving average
                    exponential_average_factor = self.momentum

        # calculate running estimates
        if self.training:
            var, mean = torch.var_mean(input, dim=[0, 1, 3, 4], unbiased=False)
            n = input.numel() / input.size(2)
            with torch.no_grad():
                self.running_mean = exponential_average_factor * mean \
                    + (1 - exponential_average_factor) * self.running_mean
                # update running_var with unbiased var
                self.running_var = exponential_average_factor * var * n / (n - 1) \
                    + (1 - exponential_average_factor) * self.running_var
        else:
            mean = self.running_mean
            var = self.running_var

        input = self.alpha * self.v_th * (input - mean[None, None, :, None, None]) / \
            (torch.sqrt(var[None, None, :, None, None] + self.eps))
        if self.affine:
            input = input * self.weight[None, None, :, None, None] + self.bias[None, None, :, None, None]

        return input


class PoissonEncoder(nn.Module):
    """Rate coding for static images: spike counts per time bin drawn from Poisson(rate * dt), clipped to 1."""

    def __init__(self, T: int, max_rate: float = 1.0, dt: float = 1.0):
        super().__init__()
        self.T = T
        self.max_rate = max_rate
        self.dt = dt

    def forward(self, x):
        # x: [B, C, H, W] in [0, 1] -> [B, T, C, H, W] in {0, 1}
        rate = (x * self.max_rate * self.dt).unsqueeze(1).expand(-1, self.T, *x.shape[1:])
        return torch.poisson(rate).clamp_(max=1.0)


class SpikingTemporalPool(nn.Module):
    """Spatial 2x2 max pooling applied to every time step of a [B, C, T, H, W] spike volume."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2))

    def forward(self, x):
        return self.pool(x)


def TET_loss(outputs, labels, criterion, means, lamb):
    """Temporal efficient training: average the per-time-step CE and add an MSE regulariser on the outputs."""
    T = outputs.size(1)
    Loss_es = 0
    for t in range(T):
        Loss_es += criterion(outputs[:, t, ...], labels)
    Loss_es = Loss_es / T  # L_TET
    if lamb != 0:
        MMDLoss = torch.nn.MSELoss()
        y = torch.zeros_like(outputs).fill_(means)
        Loss_mmd = MMDLoss(outputs, y)  # L_mse
    else:
        Loss_mmd = 0
    return (1 - lamb) * Loss_es + lamb * Loss_mmd  # L_Total


def add_dimention(x, T):
    x.unsqueeze_(1)
    x = x.repeat(1, T, 1, 1, 1)
    return x


def firing_rates(model: nn.Module, x: torch.Tensor):
    """Mean firing rate of every LIFSpike layer for one batch, via forward hooks."""
    rates, hooks = {}, []
    for name, m in model.named_modules():
        if isinstance(m, LIFSpike):
            hooks.append(m.register_forward_hook(
                lambda mod, inp, out, name=name: rates.__setitem__(name, out.detach().float().mean().item())))
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return rates
