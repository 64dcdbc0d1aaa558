"""
Projected discriminator for ADD: a frozen DINOv2 ViT feature network with light-weight trainable
heads on several intermediate token maps, conditioned on the pooled CLIP text embedding
(StyleGAN-T / ADD style). Spectral norm on every head conv, hinge loss outside.
"""
import contextlib
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.spectral_norm import SpectralNorm

DINO_MEAN = (0.485, 0.456, 0.406)
DINO_STD = (0.229, 0.224, 0.225)


class SpectralConv1d(nn.Conv1d):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        SpectralNorm.apply(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12)


class BatchNormLocal(nn.Module):
    """BatchNorm over small virtual batches, so statistics don't depend on the per-GPU batch size."""

    def __init__(self, num_features, affine=True, virtual_bs=8, eps=1e-5):
        super().__init__()
        self.virtual_bs = virtual_bs
        self.eps = eps
        self.affine = affine
        if self.affine:
            self.weight = nn.Parameter(torch.ones(num_features))
            self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        shape = x.size()
        # Reshape batch into groups.
        G = int(math.ceil(x.size(0) / self.virtual_bs))
        x = x.view(G, -1, x.size(-2), x.size(-1))
        # Calculate stats.
        mean = x.mean([1, 3], keepdim=True)
        var = x.var([1, 3], keepdim=True, unbiased=False)
        x = (x - mean) / (torch.sqrt(var + self.eps))
        if self.affine:
            x = x * self.weight[None, :, None] + self.bias[None, :, None]
        return x.view(shape)


def make_block(channels, kernel_size):
    return nn.Sequential(
        SpectralConv1d(channels, channels, kernel_size=kernel_size, padding=kernel_size // 2, padding_mode="circular"),
        BatchNormLocal(channels),
        nn.LeakyReLU(0.2, True),
    )


class ResidualBlock(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return (self.fn(x) + x) / math.sqrt(2)


class DiscHead(nn.Module):
    def __init__(self, channels, c_dim, cmap_dim=64):
        super().__init__()
        self.channels = channels
        self.c_dim = c_dim
        self.cmap_dim = cmap_dim

        self.main = nn.Sequential(make_block(channels, kernel_size=1), ResidualBlock(make_block(channels, kernel_size=9)))

        if self.c_dim > 0:
            self.cmapper = nn.Linear(self.c_dim, cmap_dim)
            self.cls = SpectralConv1d(channels, cmap_dim, kernel_size=1, padding=0)
        else:
            self.cls = SpectralConv1d(channels, 1, kernel_size=1, padding=0)

    def forward(self, x, c):
        h = self.main(x)
        out = self.cls(h)

        if self.c_dim > 0:
            cmap = self.cmapper(c).unsqueeze(-1)
            out = (out * cmap).sum(1, keepdim=True) * (1 / math.sqrt(self.cmap_dim))

        return out


class DINOFeatures(nn.Module):
    """Frozen DINOv2 backbone returning the token maps after the requested blocks."""

    def __init__(self, name="dinov2_vits14", hooks=(2, 5, 8, 11), input_size=224):
        super().__init__()
        self.model = torch.hub.load("facebookresearch/dinov2", name, pretrained=True)
        self.model.eval().requires_grad_(False)
        self.hooks = list(hooks)
        self.input_size = input_size
        self.embed_dim = self.model.embed_dim
        self.register_buffer("mean", torch.tensor(DINO_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(DINO_STD).view(1, 3, 1, 1), persistent=False)

    def train(self, mode=True):
        # the feature network always stays in eval mode
        return super().train(False)

    def forward(self, x):
        # x in [-1, 1] -> ImageNet normalisation at 224px
        x = (x + 1) / 2
        x = F.interpolate(x, size=(self.input_size, self.input_size), mode="bicubic", antialias=True, align_corners=False)
        x = (x - self.mean.to(x.dtype)) / self.std.to(x.dtype)
        outs = self.model.get_intermediate_layers(x, n=self.hooks, return_class_token=False)
        # (B, N, C) -> (B, C, N) for the 1d heads
        return [o.transpose(1, 2).contiguous() for o in outs]


class ProjectedDiscriminator(nn.Module):
    def __init__(self, feature_network="dinov2_vits14", hooks=(2, 5, 8, 11), head_channels=128, c_dim=1280):
        super().__init__()
        self.feature_network = DINOFeatures(feature_network, hooks)
        self.heads = nn.ModuleList()
        for _ in hooks:
            self.heads.append(
                nn.Sequential(
                    nn.Conv1d(self.feature_network.embed_dim, head_channels, 1),
                    DiscHead(head_channels, c_dim),
                )
            )

    def train(self, mode=True):
        self.feature_network.train(False)
        self.heads.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x, c, r1=False):
        # R1 needs a double backward through the ViT attention; the flash / mem-efficient SDPA
        # kernels do not implement it, so force the math path for that call.
        ctx = (
            torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False)
            if r1 or torch.is_grad_enabled() and x.requires_grad
            else contextlib.nullcontext()
        )
        with ctx:
            features = self.feature_network(x)
        logits = []
        for feat, head in zip(features, self.heads):
            head_proj, head_disc = head[0], head[1]
            logits.append(head_disc(head_proj(feat), c).view(x.size(0), -1))
        return logits


@torch.no_grad()
def feature_stats(disc, images, c):
    """Debug helper: mean/std of each hooked token map (used from the notebook)."""
    feats = disc.feature_network(images)
    return [(f.mean().item(), f.std().item()) for f in feats]
