"""FreeNet: fast-Fourier-convolution U-Net with a learnable band-pass frequency mask.

The spectral branch follows FFC (Chi et al., NeurIPS 2020): real FFT of the feature
map, 1x1 convolution on the stacked real/imaginary parts, inverse FFT.  FreeSeed
adds a learnable (band-pass Gaussian, multi-channel) mask in the frequency domain
so that the network focuses on the streak-dominated bands.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class LearnableFrequencyMask(nn.Module):
    def __init__(self, channels, mask_type='bp-gaussian-mc', init_band=0.3):
        super(LearnableFrequencyMask, self).__init__()
        self.mask_type = mask_type
        n = channels if mask_type.endswith('-mc') else 1
        self.center = nn.Parameter(torch.full((n, 1, 1), init_band))
        self.width = nn.Parameter(torch.full((n, 1, 1), 0.1))

    def forward(self, h, w_half, device):
        fy = torch.fft.fftfreq(h, device=device).abs().view(1, h, 1)
        fx = torch.fft.rfftfreq((w_half - 1) * 2, device=device).view(1, 1, w_half)
        radius = torch.sqrt(fx ** 2 + fy ** 2) / math.sqrt(0.5)
        if self.mask_type.startswith('bp-gaussian'):
            mask = torch.exp(-((radius - self.center) ** 2) / (2 * self.width.clamp(min=1e-3) ** 2))
        else:
            mask = torch.sigmoid((radius - self.center) / self.width.clamp(min=1e-3))
        return mask


class FourierUnit(nn.Module):
    def __init__(self, in_channels, out_channels, groups=1, use_mask=False, mask_type='bp-gaussian-mc', init_band=0.3):
        super(FourierUnit, self).__init__()
        self.groups = groups
        self.conv_layer = nn.Conv2d(in_channels * 2, out_channels * 2, kernel_size=1, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(out_channels * 2)
        self.relu = nn.ReLU(inplace=True)
        self.mask = LearnableFrequencyMask(in_channels * 2, mask_type, init_band) if use_mask else None

    def forward(self, x):
        batch = x.shape[0]
        # cuFFT in half precision only handles power-of-two sizes; keep the spectral path in fp32
        with torch.cuda.amp.autocast(enabled=False):
            x = x.float()
            ffted = torch.fft.rfftn(x, dim=(-2, -1), norm='ortho')
            ffted = torch.stack((ffted.real, ffted.imag), dim=-1)  # (B, C, H, W/2+1, 2)
            ffted = ffted.permute(0, 1, 4, 2, 3).contiguous()
            ffted = ffted.view((batch, -1,) + ffted.size()[3:])
            if self.mask is not None:
                ffted = ffted * self.mask(ffted.shape[-2], ffted.shape[-1], ffted.device)
            ffted = self.conv_layer(ffted)
            ffted = self.relu(self.bn(ffted))
            ffted = ffted.view((batch, -1, 2,) + ffted.size()[2:]).permute(0, 1, 3, 4, 2).contiguous()
            ffted = torch.complex(ffted[..., 0], ffted[..., 1])
            output = torch.fft.irfftn(ffted, s=x.shape[-2:], dim=(-2, -1), norm='ortho')
        return output


class SpectralTransform(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1, groups=1, **mask_kwargs):
        super(SpectralTransform, self).__init__()
        self.downsample = nn.AvgPool2d(kernel_size=2, stride=2) if stride == 2 else nn.Identity()
        self.conv1 = nn.Sequential(
            nn.Conv2d(in_channels, out_channels // 2, kernel_size=1, groups=groups, bias=False),
            nn.BatchNorm2d(out_channels // 2),
            nn.ReLU(inplace=True))
        self.fu = FourierUnit(out_channels // 2, out_channels // 2, groups, use_mask=True, **mask_kwargs)
        self.conv2 = nn.Conv2d(out_channels // 2, out_channels, kernel_size=1, groups=groups, bias=False)

    def forward(self, x):
        x = self.downsample(x)
        x = self.conv1(x)
        output = self.fu(x)
        output = self.conv2(x + output.to(x.dtype))
        return output


class FFC(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, ratio_gin=0.5, ratio_gout=0.5,
                 stride=1, padding=1, **mask_kwargs):
        super(FFC, self).__init__()
        in_cg = int(in_channels * ratio_gin)
        in_cl = in_channels - in_cg
        out_cg = int(out_channels * ratio_gout)
        out_cl = out_channels - out_cg
        self.ratio_gin = ratio_gin
        self.ratio_gout = ratio_gout
        self.global_in_num = in_cg
        self.convl2l = nn.Conv2d(in_cl, out_cl, kernel_size, stride, padding) if in_cl > 0 and out_cl > 0 else None
        self.convl2g = nn.Conv2d(in_cl, out_cg, kernel_size, stride, padding) if in_cl > 0 and out_cg > 0 else None
        self.convg2l = nn.Conv2d(in_cg, out_cl, kernel_size, stride, padding) if in_cg > 0 and out_cl > 0 else None
        self.convg2g = SpectralTransform(in_cg, out_cg, stride, **mask_kwargs) if in_cg > 0 and out_cg > 0 else None

    def forward(self, x):
        x_l, x_g = x if type(x) is tuple else (x, 0)
        out_xl, out_xg = 0, 0
        if self.ratio_gout != 1:
            out_xl = (self.convl2l(x_l) if self.convl2l is not None else 0) + \
                     (self.convg2l(x_g) if self.convg2l is not None else 0)
        if self.ratio_gout != 0:
            out_xg = (self.convl2g(x_l) if self.convl2g is not None else 0) + \
                     (self.convg2g(x_g) if self.convg2g is not None else 0)
        return out_xl, out_xg


class FFCResBlock(nn.Module):
    def __init__(self, dim, ratio=0.5, **mask_kwargs):
        super(FFCResBlock, self).__init__()
        gc = int(dim * ratio)
        lc = dim - gc
        self.conv1 = FFC(dim, dim, 3, ratio, ratio, **mask_kwargs)
        self.conv2 = FFC(dim, dim, 3, ratio, ratio, **mask_kwargs)
        self.bn_l1, self.bn_g1 = nn.BatchNorm2d(lc), nn.BatchNorm2d(gc)
        self.bn_l2, self.bn_g2 = nn.BatchNorm2d(lc), nn.BatchNorm2d(gc)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        x_l, x_g = x
        id_l, id_g = x_l, x_g
        x_l, x_g = self.conv1((x_l, x_g))
        x_l, x_g = self.act(self.bn_l1(x_l)), self.act(self.bn_g1(x_g))
        x_l, x_g = self.conv2((x_l, x_g))
        x_l, x_g = self.bn_l2(x_l), self.bn_g2(x_g)
        return id_l + x_l, id_g + x_g


class FreeNet(nn.Module):
    def __init__(self, in_channels=1, out_channels=1, dims=64, num_blocks=6, ratio_ginout=0.5,
                 mask_type='bp-gaussian-mc', mask_init_band=0.3):
        super(FreeNet, self).__init__()
        mk = dict(mask_type=mask_type, init_band=mask_init_band)
        self.head = nn.Sequential(
            nn.Conv2d(in_channels, dims, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(dims, dims * 2, 3, stride=2, padding=1), nn.BatchNorm2d(dims * 2), nn.ReLU(inplace=True))
        c = dims * 2
        self.split_l = int(c * (1 - ratio_ginout))
        self.blocks = nn.ModuleList([FFCResBlock(c, ratio_ginout, **mk) for _ in range(num_blocks)])
        self.tail = nn.Sequential(
            nn.ConvTranspose2d(c, dims, 4, stride=2, padding=1), nn.BatchNorm2d(dims), nn.ReLU(inplace=True),
            nn.Conv2d(dims, out_channels, 3, padding=1))

    def get_masks(self):
        return [m for m in self.modules() if isinstance(m, LearnableFrequencyMask)]

    def forward(self, x):
        feat = self.head(x)
        x_l, x_g = feat[:, :self.split_l], feat[:, self.split_l:]
        for blk in self.blocks:
            x_l, x_g = blk((x_l, x_g))
        out = self.tail(torch.cat([x_l, x_g], dim=1))
        return x + out, self.get_masks()


class SeedNet(nn.Module):
    """Self-guided artifact refinement: a light U-Net fed with (input, FreeNet output, residual)."""
    def __init__(self, freenet, dims=64):
        super(SeedNet, self).__init__()
        self.freenet = freenet
        self.refine = nn.Sequential(
            nn.Conv2d(3, dims, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(dims, dims, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(dims, dims, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(dims, 1, 3, padding=1))

    def forward(self, x):
        out, masks = self.freenet(x)
        residual = x - out
        refined = out + self.refine(torch.cat([x, out, residual], dim=1))
        return out, refined, masks


class FFCUNet(nn.Module):
    """Multi-scale variant: FFC residual blocks at two resolutions with a skip connection.

    Used for the 512x512 experiments where a single-scale FreeNet runs out of memory
    with batch size 2 on a 24 GB card.
    """
    def __init__(self, in_channels=1, out_channels=1, dims=48, ratio_ginout=0.5,
                 mask_type='bp-gaussian-mc', mask_init_band=0.3, blocks=(3, 3)):
        super(FFCUNet, self).__init__()
        mk = dict(mask_type=mask_type, init_band=mask_init_band)
        self.stem = nn.Sequential(nn.Conv2d(in_channels, dims, 3, padding=1), nn.ReLU(inplace=True))
        self.down1 = nn.Sequential(nn.Conv2d(dims, dims * 2, 3, stride=2, padding=1), nn.BatchNorm2d(dims * 2),
                                   nn.ReLU(inplace=True))
        self.down2 = nn.Sequential(nn.Conv2d(dims * 2, dims * 4, 3, stride=2, padding=1), nn.BatchNorm2d(dims * 4),
                                   nn.ReLU(inplace=True))
        self.split1 = int(dims * 2 * (1 - ratio_ginout))
        self.split2 = int(dims * 4 * (1 - ratio_ginout))
        self.level1 = nn.ModuleList([FFCResBlock(dims * 2, ratio_ginout, **mk) for _ in range(blocks[0])])
        self.level2 = nn.ModuleList([FFCResBlock(dims * 4, ratio_ginout, **mk) for _ in range(blocks[1])])
        self.up2 = nn.ConvTranspose2d(dims * 4, dims * 2, 4, stride=2, padding=1)
        self.fuse = nn.Conv2d(dims * 4, dims * 2, 1)
        self.up1 = nn.ConvTranspose2d(dims * 2, dims, 4, stride=2, padding=1)
        self.head = nn.Conv2d(dims * 2, out_channels, 3, padding=1)

    @staticmethod
    def _run(blocks, feat, split):
        x_l, x_g = feat[:, :split], feat[:, split:]
        for blk in blocks:
            x_l, x_g = blk((x_l, x_g))
        return torch.cat([x_l, x_g], dim=1)

    def forward(self, x):
        f0 = self.stem(x)
        f1 = self._run(self.level1, self.down1(f0), self.split1)
        f2 = self._run(self.level2, self.down2(f1), self.split2)
        u1 = self.fuse(torch.cat([self.up2(f2), f1], dim=1))
        u0 = self.up1(u1)
        out = self.head(torch.cat([u0, f0], dim=1))
        return x + out, [m for m in self.modules() if isinstance(m, LearnableFrequencyMask)]


def mask_regularization(masks, target_band=0.3, weight=1e-3):
    """Keeps the learned pass bands from collapsing onto DC (FreeSeed, Eq. 6)."""
    if not masks:
        return 0.0
    reg = 0.0
    for m in masks:
        reg = reg + (m.center - target_band).pow(2).mean() + F.relu(0.02 - m.width).mean()
    return weight * reg / len(masks)


@torch.no_grad()
def render_masks(model, h=256, w=256):
    """Returns the learned frequency masks (averaged over channels) for visualisation."""
    device = next(model.parameters()).device
    images = []
    for m in model.modules():
        if isinstance(m, LearnableFrequencyMask):
            mask = m(h, w // 2 + 1, device).mean(0)
            images.append(mask.cpu())
    return images
