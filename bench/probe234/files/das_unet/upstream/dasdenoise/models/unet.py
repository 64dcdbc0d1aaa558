"""
2-D U-Net used for self-supervised (blind-spot / masked-channel) denoising of
DAS records, in the spirit of jDAS (van den Ende et al., 2021).

Input:  (batch, 1, n_channels, n_samples) strain-rate patches, with a set of
        channels masked out.
Output: reconstruction of the masked channels from their neighbours.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class DoubleConv(nn.Module):
    def __init__(self, in_ch, out_ch, kernel=(3, 5), dropout=0.0, norm="batch"):
        super().__init__()
        pad = (kernel[0] // 2, kernel[1] // 2)
        Norm = nn.BatchNorm2d if norm == "batch" else (lambda c: nn.GroupNorm(8, c))
        self.block = nn.Sequential(
            nn.Conv2d(in_ch, out_ch, kernel, padding=pad, bias=False),
            Norm(out_ch),
            nn.SiLU(inplace=True),
            nn.Conv2d(out_ch, out_ch, kernel, padding=pad, bias=False),
            Norm(out_ch),
            nn.SiLU(inplace=True),
        )
        self.drop = nn.Dropout2d(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x):
        return self.drop(self.block(x))


class Down(nn.Module):
    def __init__(self, in_ch, out_ch, pool=(1, 4), **kw):
        super().__init__()
        self.pool = nn.MaxPool2d(pool)
        self.conv = DoubleConv(in_ch, out_ch, **kw)

    def forward(self, x):
        return self.conv(self.pool(x))


class Up(nn.Module):
    def __init__(self, in_ch, out_ch, scale=(1, 4), bilinear=True, **kw):
        super().__init__()
        self.scale = scale
        self.bilinear = bilinear
        if bilinear:
            self.reduce = nn.Conv2d(in_ch, in_ch // 2, kernel_size=1)
        else:
            self.up = nn.ConvTranspose2d(in_ch, in_ch // 2, kernel_size=scale, stride=scale)
        self.conv = DoubleConv(in_ch, out_ch, **kw)

    def forward(self, x, skip):
        if self.bilinear:
            x = F.interpolate(x, scale_factor=self.scale, mode="bilinear", align_corners=False)
            x = self.reduce(x)
        else:
            x = self.up(x)
        dh = skip.shape[2] - x.shape[2]
        dw = skip.shape[3] - x.shape[3]
        x = F.pad(x, [dw // 2, dw - dw // 2, dh // 2, dh - dh // 2])
        return self.conv(torch.cat([skip, x], dim=1))


class DASUNet(nn.Module):
    """
    :param base: number of filters in the first level
    :param depth: number of down-sampling levels
    :param pool: pooling factor (channels, time); DAS patches are short in the
                 channel direction, so by default we only pool in time
    :param grad_checkpoint: trade compute for memory on the deepest levels
    """

    def __init__(self, in_channels=1, out_channels=1, base=32, depth=4, pool=(1, 4),
                 dropout=0.0, norm="batch", bilinear=True, grad_checkpoint=False):
        super().__init__()
        self.grad_checkpoint = grad_checkpoint
        self.inc = DoubleConv(in_channels, base, norm=norm)
        chans = [base * 2 ** i for i in range(depth + 1)]
        self.downs = nn.ModuleList(
            [Down(chans[i], chans[i + 1], pool=pool, dropout=dropout, norm=norm) for i in range(depth)]
        )
        self.ups = nn.ModuleList(
            [Up(chans[i + 1], chans[i], scale=pool, bilinear=bilinear, norm=norm) for i in reversed(range(depth))]
        )
        self.outc = nn.Conv2d(base, out_channels, kernel_size=1)

    def forward(self, x, mask=None):
        if mask is not None:
            x = x * (1 - mask)
        skips = [self.inc(x)]
        h = skips[0]
        for i, down in enumerate(self.downs):
            if self.grad_checkpoint and self.training and i >= len(self.downs) // 2:
                h = checkpoint(down, h, use_reentrant=False)
            else:
                h = down(h)
            skips.append(h)
        h = skips.pop()
        for up in self.ups:
            h = up(h, skips.pop())
        return self.outc(h)


def masked_mse(pred, target, mask):
    """Loss only on the blanked-out channels (blind-spot objective)."""
    diff = (pred - target) ** 2 * mask
    return diff.sum() / mask.sum().clamp(min=1.0)


def random_channel_mask(batch, n_masked=1, exclude_edges=2, generator=None):
    """
    Build a (B, 1, C, 1) mask selecting ``n_masked`` random channels per sample.
    The mask is created on the same device as the batch.
    """
    b, _, c, _ = batch.shape
    mask = torch.zeros(b, 1, c, 1, device=batch.device, dtype=batch.dtype)
    for i in range(b):
        idx = torch.randperm(c - 2 * exclude_edges, generator=generator)[:n_masked] + exclude_edges
        mask[i, 0, idx, 0] = 1.0
    return mask


def build_model(cfg: dict) -> DASUNet:
    m = cfg.get("model", {})
    return DASUNet(
        base=m.get("base", 32),
        depth=m.get("depth", 4),
        pool=tuple(m.get("pool", (1, 4))),
        dropout=m.get("dropout", 0.0),
        norm=m.get("norm", "batch"),
        bilinear=m.get("bilinear", True),
        grad_checkpoint=m.get("grad_checkpoint", False),
    )
