"""Gated convolution layers used by the Bluche and Flor architectures."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedConv2d(nn.Module):
    """Gated convolution (Bluche & Messina, 2017): out = x * sigmoid(conv(x))."""

    def __init__(self, channels, kernel_size=3, padding=1):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=kernel_size, padding=padding)
        nn.init.kaiming_uniform_(self.conv.weight, nonlinearity="sigmoid")
        nn.init.zeros_(self.conv.bias)

    def forward(self, x):
        return x * torch.sigmoid(self.conv(x))


class FullGatedConv2d(nn.Module):
    """Full gated convolution (Flor, 2020).

    The convolution produces 2*C channels; the first half is the linear path and
    the second half the gate: out = linear * sigmoid(gate).
    """

    def __init__(self, channels, kernel_size=3, padding=1, max_norm=None):
        super().__init__()
        self.channels = channels
        self.max_norm = max_norm
        self.conv = nn.Conv2d(channels, channels * 2, kernel_size=kernel_size, padding=padding)
        nn.init.kaiming_uniform_(self.conv.weight)
        nn.init.zeros_(self.conv.bias)

    @torch.no_grad()
    def _apply_max_norm(self):
        # Keras MaxNorm(max_value, axis=[0, 1, 2]) on an HWIO kernel == per output filter here
        w = self.conv.weight
        norms = w.flatten(1).norm(dim=1).clamp_min(1e-7)
        desired = norms.clamp(max=self.max_norm)
        w.mul_((desired / norms).view(-1, 1, 1, 1))

    def forward(self, x):
        if self.training and self.max_norm is not None:
            self._apply_max_norm()
        out = self.conv(x)
        linear, gate = out.split(self.channels, dim=1)
        return linear * torch.sigmoid(gate)


class OctConv2d(nn.Module):
    """Simplified octave convolution (used by an experimental 'octave' arch)."""

    def __init__(self, in_ch, out_ch, kernel_size=3, alpha=0.5, padding=1):
        super().__init__()
        self.in_h = int(in_ch * (1 - alpha))
        self.in_l = in_ch - self.in_h
        self.out_h = int(out_ch * (1 - alpha))
        self.out_l = out_ch - self.out_h
        self.h2h = nn.Conv2d(self.in_h, self.out_h, kernel_size, padding=padding)
        self.h2l = nn.Conv2d(self.in_h, self.out_l, kernel_size, padding=padding)
        self.l2h = nn.Conv2d(self.in_l, self.out_h, kernel_size, padding=padding)
        self.l2l = nn.Conv2d(self.in_l, self.out_l, kernel_size, padding=padding)

    def forward(self, x):
        x_h, x_l = x
        y_h = self.h2h(x_h) + F.interpolate(self.l2h(x_l), size=x_h.shape[-2:], mode="nearest")
        y_l = self.l2l(x_l) + self.h2l(F.avg_pool2d(x_h, 2))
        return y_h, y_l


class MaskedBatchNorm1d(nn.BatchNorm1d):
    """BatchNorm over the time axis that ignores padded frames."""

    def forward(self, x, lengths=None):
        # x: [b, c, T]
        if lengths is None:
            return super().forward(x)
        mask = torch.arange(x.size(2), device=x.device)[None, :] < lengths[:, None].to(x.device)
        flat = x.transpose(1, 2)[mask]  # [N, c]
        flat = F.batch_norm(flat, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training, self.momentum, self.eps)
        out = torch.zeros_like(x.transpose(1, 2))
        out[mask] = flat
        return out.transpose(1, 2)
