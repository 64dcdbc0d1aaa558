"""DuDoNet: Dual Domain Network for CT Metal Artifact Reduction (Lin et al., CVPR 2019).

SE-Net  : mask-aware U-Net that inpaints the metal trace in the linearly
          interpolated sinogram S_LI.
RIL     : Radon inversion layer -- padding + ramp filtering + back-projection,
          differentiable so that image-domain losses reach SE-Net.
IE-Net  : U-Net that refines the image reconstructed from the enhanced sinogram
          using the LI-corrected image X_LI as extra input.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from utils.build_geometry import build_ops


class ConvBlock(nn.Module):
    def __init__(self, in_ch, out_ch):
        super(ConvBlock, self).__init__()
        self.block = nn.Sequential(
            nn.Conv2d(in_ch, out_ch, 3, padding=1),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_ch, out_ch, 3, padding=1),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.block(x)


class UNet(nn.Module):
    def __init__(self, in_ch, out_ch, base=32, depth=4):
        super(UNet, self).__init__()
        self.downs = nn.ModuleList()
        self.ups = nn.ModuleList()
        self.upconvs = nn.ModuleList()
        ch = in_ch
        for d in range(depth):
            self.downs.append(ConvBlock(ch, base * 2 ** d))
            ch = base * 2 ** d
        self.bottom = ConvBlock(ch, ch * 2)
        ch = ch * 2
        for d in reversed(range(depth)):
            self.upconvs.append(nn.ConvTranspose2d(ch, base * 2 ** d, 2, stride=2))
            self.ups.append(ConvBlock(base * 2 ** (d + 1), base * 2 ** d))
            ch = base * 2 ** d
        self.out = nn.Conv2d(ch, out_ch, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottom(x)
        for upconv, up, skip in zip(self.upconvs, self.ups, reversed(skips)):
            x = upconv(x)
            if x.shape[-2:] != skip.shape[-2:]:
                x = F.interpolate(x, size=skip.shape[-2:], mode='bilinear', align_corners=False)
            x = up(torch.cat([x, skip], dim=1))
        return self.out(x)


class MaskPyramid(nn.Module):
    """Down-samples the metal-trace mask to every encoder resolution (mask pyramid U-Net)."""
    def __init__(self, depth=4):
        super(MaskPyramid, self).__init__()
        self.depth = depth

    def forward(self, mask):
        pyramid = [mask]
        for _ in range(self.depth - 1):
            mask = F.max_pool2d(mask, 2, ceil_mode=True)
            pyramid.append(mask)
        return pyramid


class MaskGuidedBlock(nn.Module):
    def __init__(self, in_ch, out_ch):
        super(MaskGuidedBlock, self).__init__()
        self.conv = ConvBlock(in_ch + 1, out_ch)

    def forward(self, x, mask):
        if mask.shape[-2:] != x.shape[-2:]:
            mask = F.interpolate(mask, size=x.shape[-2:], mode='nearest')
        return self.conv(torch.cat([x, mask], dim=1))


class SENet(nn.Module):
    """Sinogram enhancement: input (S_LI, M_proj), output residual on S_LI.

    The metal trace is fed at every encoder level (mask pyramid), which the paper
    found essential for inpainting wide traces.
    """
    def __init__(self, base=32, depth=4):
        super(SENet, self).__init__()
        self.pyramid = MaskPyramid(depth)
        self.enc = nn.ModuleList()
        ch = 1
        for d in range(depth):
            self.enc.append(MaskGuidedBlock(ch, base * 2 ** d))
            ch = base * 2 ** d
        self.dec = nn.ModuleList()
        self.up = nn.ModuleList()
        for d in reversed(range(depth - 1)):
            self.up.append(nn.ConvTranspose2d(ch, base * 2 ** d, 2, stride=2))
            self.dec.append(ConvBlock(base * 2 ** (d + 1), base * 2 ** d))
            ch = base * 2 ** d
        self.out = nn.Conv2d(ch, 1, 1)

    def forward(self, s_li, m_proj):
        masks = self.pyramid(m_proj)
        skips = []
        x = s_li
        for d, blk in enumerate(self.enc):
            x = blk(x, masks[d])
            if d < len(self.enc) - 1:
                skips.append(x)
                x = F.max_pool2d(x, 2, ceil_mode=True)
        for up, dec, skip in zip(self.up, self.dec, reversed(skips)):
            x = up(x)
            x = F.interpolate(x, size=skip.shape[-2:], mode='bilinear', align_corners=False) \
                if x.shape[-2:] != skip.shape[-2:] else x
            x = dec(torch.cat([x, skip], dim=1))
        return s_li + self.out(x) * m_proj


class RadonInversionLayer(nn.Module):
    """Pads the sinogram along the angle axis and applies ODL's FBP (Ram-Lak)."""
    def __init__(self, op_fbp, pad=8, half_fan=0.2618):
        super(RadonInversionLayer, self).__init__()
        self.op_fbp = op_fbp
        self.pad = pad
        self.half_fan = half_fan

    def forward(self, sino):
        b, c, h, w = sino.shape
        # circular padding along the angle direction (0 .. 2*pi)
        padded = torch.cat([sino[:, :, -self.pad:, :], sino, sino[:, :, :self.pad, :]], dim=2)
        # the ODL operator expects exactly nProj views: crop back after the smoothing conv
        padded = padded[:, :, self.pad:self.pad + h, :]
        # cosine pre-weighting of the detector bins (equi-spaced flat detector)
        u = torch.linspace(-1.0, 1.0, w).cuda()
        weight = torch.cos(u * self.half_fan).view(1, 1, 1, w)
        return self.op_fbp(padded * weight)


class IENet(nn.Module):
    """Image enhancement: input (X_SE, X_LI), output residual on X_SE."""
    def __init__(self, base=32):
        super(IENet, self).__init__()
        self.unet = UNet(2, 1, base=base)

    def forward(self, x_se, x_li):
        x = torch.cat([x_se, x_li], dim=1)
        return x_se + self.unet(x)


class DuDoNet(nn.Module):
    def __init__(self, opt):
        super(DuDoNet, self).__init__()
        self.op_fp, self.op_pT, self.op_fbp = build_ops()
        self.se_net = SENet(base=opt.base_ch)
        self.ril = RadonInversionLayer(self.op_fbp, pad=opt.ril_pad)
        self.ie_net = IENet(base=opt.base_ch)

    def forward(self, s_li, x_li, m_proj):
        s_se = self.se_net(s_li, m_proj)
        x_se = self.ril(s_se)
        x_out = self.ie_net(x_se, x_li)
        return s_se, x_se, x_out


class DuDoLoss(nn.Module):
    """L1 on the sinogram, the RIL output (with Radon consistency) and the final image."""
    def __init__(self, w_se=1.0, w_rc=1.0, w_ie=1.0):
        super(DuDoLoss, self).__init__()
        self.w_se, self.w_rc, self.w_ie = w_se, w_rc, w_ie

    def forward(self, s_se, x_se, x_out, s_gt, x_gt, mask):
        # mask: 1 outside metal, 0 inside; metal pixels are excluded from the image losses
        l_se = F.l1_loss(s_se, s_gt)
        l_rc = F.l1_loss(x_se * mask, x_gt * mask)
        l_ie = F.l1_loss(x_out * mask, x_gt * mask)
        total = self.w_se * l_se + self.w_rc * l_rc + self.w_ie * l_ie
        return total, dict(se=l_se.item(), rc=l_rc.item(), ie=l_ie.item())


class LearnableRampFilter(nn.Module):
    """Optional: replaces the fixed Ram-Lak filter of the RIL by a learnable frequency
    response, initialised to |w| and applied per detector row with an FFT."""
    def __init__(self, num_det, pad_to=None):
        super(LearnableRampFilter, self).__init__()
        n = pad_to or int(2 ** torch.ceil(torch.log2(torch.tensor(2.0 * num_det))).item())
        self.n = n
        freqs = torch.fft.rfftfreq(n)
        self.response = nn.Parameter(2 * freqs.abs())

    def forward(self, sino):
        w = sino.shape[-1]
        padded = F.pad(sino, (0, self.n - w))
        spec = torch.fft.rfft(padded, dim=-1)
        filtered = torch.fft.irfft(spec * self.response, n=self.n, dim=-1)
        return filtered[..., :w]
