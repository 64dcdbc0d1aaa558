import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBNReLU(nn.Module):
    def __init__(self, in_ch, out_ch, k=3, s=1, p=1, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, k, s, p, bias=False)
        self.bn = norm_layer(out_ch)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class FDM(nn.Module):
    """Feature Diffusion Module (v1).

    Collects the feature vectors at the clicked positions and spreads them over
    the feature map with a non-local style affinity.
    """

    def __init__(self, in_channels=256, mid_channels=128):
        super().__init__()
        self.query = nn.Conv2d(in_channels, mid_channels, 1)
        self.key = nn.Conv2d(in_channels, mid_channels, 1)
        self.value = nn.Conv2d(in_channels, in_channels, 1)
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x, pos_map, neg_map):
        b, c, h, w = x.shape
        q = self.query(x).view(b, -1, h * w).permute(0, 2, 1)        # B x HW x C'
        k = self.key(x).view(b, -1, h * w)                            # B x C' x HW
        v = self.value(x).view(b, c, h * w)                           # B x C x HW

        click = (pos_map + neg_map).view(b, 1, h * w)
        affinity = torch.bmm(q, k) / (k.shape[1] ** 0.5)              # B x HW x HW
        affinity = affinity.masked_fill(click < 0.5, float('-inf'))
        has_click = click.sum(-1, keepdim=True) > 0
        affinity = torch.where(has_click, affinity, torch.zeros_like(affinity))
        affinity = F.softmax(affinity, dim=-1)

        out = torch.bmm(v, affinity.permute(0, 2, 1)).view(b, c, h, w)
        return x + self.gamma * out


class FDM_v2(nn.Module):
    """Feature Diffusion Module (v2) used in the released CDNet checkpoints.

    Positive and negative clicks are diffused separately; the two diffused maps
    are fused with the input features through a small gating branch.
    """

    def __init__(self, in_channels=256, mid_channels=64, window=7):
        super().__init__()
        self.window = window
        self.pos_proj = ConvBNReLU(in_channels, mid_channels, 1, 1, 0)
        self.neg_proj = ConvBNReLU(in_channels, mid_channels, 1, 1, 0)
        self.embed = nn.Conv2d(in_channels, mid_channels, 1)
        self.fuse = ConvBNReLU(in_channels + 2 * mid_channels, in_channels)
        self.gate = nn.Sequential(nn.Conv2d(in_channels, in_channels, 1), nn.Sigmoid())

        # fixed gaussian used to soften the click seeds before diffusion
        self.register_buffer('blur_kernel', self._gaussian_kernel(window, sigma=window / 3.0))

    @staticmethod
    def _gaussian_kernel(size, sigma):
        ax = torch.arange(size, dtype=torch.float32) - (size - 1) / 2.0
        g = torch.exp(-(ax ** 2) / (2 * sigma ** 2))
        kernel = g[:, None] * g[None, :]
        kernel = kernel / kernel.sum()
        return kernel.view(1, 1, size, size)

    def diffuse(self, embed, proj, seed):
        b, c, h, w = embed.shape
        seed = F.conv2d(seed, self.blur_kernel, padding=self.window // 2)
        seed_sum = seed.sum(dim=(2, 3), keepdim=True).clamp(min=1e-6)

        # prototype = seed-weighted average of projected features
        proto = (proj * seed).sum(dim=(2, 3), keepdim=True) / seed_sum          # B x C' x 1 x 1
        sim = F.cosine_similarity(embed, proto.expand_as(embed), dim=1).unsqueeze(1)
        return proj * sim.clamp(min=0)

    def forward(self, x, pos_map, neg_map):
        embed = self.embed(x)
        pos = self.diffuse(embed, self.pos_proj(x), pos_map)
        neg = self.diffuse(embed, self.neg_proj(x), neg_map)
        fused = self.fuse(torch.cat([x, pos, neg], dim=1))
        return x + self.gate(fused) * fused


def build_distance_prior(h, w, points, sigma=10.0):
    """Dense gaussian prior centred on each click (used by the ablation in Tab. 4)."""
    yy = torch.arange(h).view(h, 1).float().cuda()
    xx = torch.arange(w).view(1, w).float().cuda()
    priors = []
    for p in points:
        if p[0] < 0:
            continue
        d = (yy - p[0]) ** 2 + (xx - p[1]) ** 2
        priors.append(torch.exp(-d / (2 * sigma ** 2)))
    if not priors:
        return torch.zeros(1, 1, h, w, device=yy.device)
    return torch.stack(priors).max(dim=0)[0][None, None]
