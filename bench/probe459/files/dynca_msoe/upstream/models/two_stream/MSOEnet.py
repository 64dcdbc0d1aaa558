"""Multi-Scale Oriented Energy network (MSOE-net).

Used by DyNCA as a frozen, pretrained optical-flow / motion-feature extractor
for the motion loss (two-stream texture synthesis, Tesfaldet et al. 2018).
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class ChannelNorm(nn.Module):
    def __init__(self, eps=1e-12):
        super(ChannelNorm, self).__init__()
        self.eps = eps

    def forward(self, x):
        return x / (x.sum(dim=1, keepdim=True) + self.eps)


class MSOEmultiscale(nn.Module):
    def __init__(self, num_scales=5, c_in=2):
        super(MSOEmultiscale, self).__init__()
        self.num_scales = num_scales
        self.msoe = MSOE(c_in=c_in)
        self.decode_conv1 = nn.Conv2d(64 * num_scales, 64, 1)
        self.decode_conv2 = nn.Conv2d(64, 2, 1)

    def forward(self, x, return_features=False):
        _, _, _, h, w = x.shape
        features = []
        for scale in range(self.num_scales):
            if scale == 0:
                xs = x
            else:
                b, c, t, hh, ww = x.shape
                xs = x.permute(0, 2, 1, 3, 4).reshape(b * t, c, hh, ww)
                xs = F.avg_pool2d(xs, 2 ** scale)
                xs = xs.reshape(b, t, c, xs.shape[-2], xs.shape[-1]).permute(0, 2, 1, 3, 4)
            y = self.msoe(xs)
            if scale != 0:
                y = F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False)
            features.append(y)
        features_cat = torch.cat(features, dim=1)
        flow = self.decode_conv2(F.relu(self.decode_conv1(features_cat)))
        if return_features:
            return flow, features
        return flow


class MSOE(nn.Module):
    def __init__(self, c_in=2):
        super(MSOE, self).__init__()
        # 3-D spatiotemporal oriented filters, learned
        self.conv1 = nn.Conv3d(c_in, 32, kernel_size=(2, 11, 11), padding=(0, 5, 5))
        self.pool = nn.MaxPool3d(kernel_size=(1, 5, 5), stride=1, padding=(0, 2, 2))
        self.conv2 = nn.Conv2d(32, 64, 1)
        self.norm = ChannelNorm()

    def forward(self, x):
        y = self.conv1(x)
        y = y * y  # energy
        y = self.pool(y)
        y = y.squeeze(2)
        y = self.conv2(y)
        y = self.norm(F.relu(y))
        return y


class MSOEnet(nn.Module):
    """Wrapper that converts an RGB frame pair to grey and runs MSOEmultiscale."""

    def __init__(self, num_scales=5):
        super(MSOEnet, self).__init__()
        self.model = MSOEmultiscale(num_scales=num_scales, c_in=1)
        self.register_buffer("rgb_weights", torch.tensor([0.2989, 0.5870, 0.1140]).view(1, 3, 1, 1))

    def to_grey(self, x):
        return (x * self.rgb_weights).sum(dim=1, keepdim=True)

    def forward(self, frame_a, frame_b, return_features=False):
        x = torch.stack([self.to_grey(frame_a), self.to_grey(frame_b)], dim=2)
        return self.model(x, return_features=return_features)


def load_msoe(model_path="pretrained_models/two_stream/MSOEnet_ep50.pth", device=None, num_scales=5):
    model = MSOEnet(num_scales=num_scales)
    if not os.path.exists(model_path):
        raise FileNotFoundError(
            "MSOEnet weights not found at %s, run `bash scripts/download_pretrained.sh` first" % model_path
        )
    # weights were saved from a GPU run; keep them on the GPU when loading
    state = torch.load(model_path, map_location=lambda storage, loc: storage.cuda())
    if "model_state_dict" in state:
        state = state["model_state_dict"]
    model.load_state_dict(state)
    if device is not None:
        model = model.to(device)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model
