"""
PhaseNet (Zhu & Beroza, 2019) as a PyTorch module.

The network is a 1-D U-Net over (batch, channel, time, station) tensors; the
station axis is kept with width 1 for single-station data so that the same
code handles DAS arrays (width = number of channels along the fibre).
"""
from typing import Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

default_cfgs = {
    "phasenet": {"kernel_size": (7, 1), "stride": (4, 1), "features": [8, 16, 32, 64, 128]},
    "phasenet_das": {"kernel_size": (7, 7), "stride": (4, 4), "features": [8, 16, 32, 64, 128]},
}


def moving_normalize(data, filter=1024, stride=128):
    """Normalize by a moving standard deviation along the time axis (dim 2)."""
    nb, nch, nt, nx = data.shape
    if nt % stride == 0:
        pad = max(filter - stride, 0)
    else:
        pad = max(filter - (nt % stride), 0)
    pad1 = pad // 2
    pad2 = pad - pad1

    with torch.no_grad():
        data_ = F.pad(data, (0, 0, pad1, pad2), mode="reflect")
        mean = F.avg_pool2d(data_, kernel_size=(filter, 1), stride=(stride, 1))
        mean = F.interpolate(mean, scale_factor=(stride, 1), mode="bilinear", align_corners=False)[:, :, :nt, :nx]
        data -= mean

        data_ = F.pad(data, (0, 0, pad1, pad2), mode="reflect")
        std = F.avg_pool2d(data_ ** 2, kernel_size=(filter, 1), stride=(stride, 1)) ** 0.5
        std = F.interpolate(std, scale_factor=(stride, 1), mode="bilinear", align_corners=False)[:, :, :nt, :nx]
        std[std == 0.0] = 1.0
        data = data / std

    return data


class ConvBlock(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, dropout=0.0):
        super().__init__()
        padding = tuple(k // 2 for k in kernel_size)
        self.conv = nn.Conv2d(in_ch, out_ch, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x):
        return self.drop(F.relu(self.bn(self.conv(x))))


class Encoder(nn.Module):
    def __init__(self, in_channels, features, kernel_size, stride):
        super().__init__()
        self.input_conv = ConvBlock(in_channels, features[0], kernel_size)
        self.blocks = nn.ModuleList()
        self.downs = nn.ModuleList()
        for i in range(len(features)):
            in_ch = features[max(i - 1, 0)] if i > 0 else features[0]
            self.blocks.append(ConvBlock(in_ch, features[i], kernel_size))
            if i < len(features) - 1:
                padding = tuple(k // 2 for k in kernel_size)
                self.downs.append(
                    nn.Sequential(
                        nn.Conv2d(features[i], features[i], kernel_size, stride=stride, padding=padding, bias=False),
                        nn.BatchNorm2d(features[i]),
                        nn.ReLU(inplace=True),
                    )
                )

    def forward(self, x) -> List[torch.Tensor]:
        x = self.input_conv(x)
        skips = []
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i < len(self.downs):
                skips.append(x)
                x = self.downs[i](x)
        return skips + [x]


class Decoder(nn.Module):
    def __init__(self, features, kernel_size, stride):
        super().__init__()
        self.ups = nn.ModuleList()
        self.blocks = nn.ModuleList()
        rev = features[::-1]
        for i in range(len(rev) - 1):
            padding = tuple(k // 2 for k in kernel_size)
            output_padding = tuple(s - 1 for s in stride)
            self.ups.append(
                nn.Sequential(
                    nn.ConvTranspose2d(rev[i], rev[i + 1], kernel_size, stride=stride, padding=padding,
                                       output_padding=output_padding, bias=False),
                    nn.BatchNorm2d(rev[i + 1]),
                    nn.ReLU(inplace=True),
                )
            )
            self.blocks.append(ConvBlock(rev[i + 1] * 2, rev[i + 1], kernel_size))

    def forward(self, feats: List[torch.Tensor]) -> torch.Tensor:
        x = feats[-1]
        skips = feats[:-1][::-1]
        for up, block, skip in zip(self.ups, self.blocks, skips):
            x = up(x)
            # crop / pad to the skip size (odd lengths after strided conv)
            dt = skip.shape[2] - x.shape[2]
            dx = skip.shape[3] - x.shape[3]
            x = F.pad(x, (dx // 2, dx - dx // 2, dt // 2, dt - dt // 2))
            x = block(torch.cat([skip, x], dim=1))
        return x


class PhaseNet(nn.Module):
    def __init__(self, backbone="unet", in_channels=3, out_channels=3, cfg="phasenet",
                 use_polarity=False, init_features=8, **kwargs):
        super().__init__()
        cfg = dict(default_cfgs[cfg])
        features = [init_features * 2 ** i for i in range(len(cfg["features"]))]
        self.encoder = Encoder(in_channels, features, cfg["kernel_size"], cfg["stride"])
        self.decoder = Decoder(features, cfg["kernel_size"], cfg["stride"])
        self.phase_head = nn.Conv2d(features[0], out_channels, kernel_size=1)
        self.use_polarity = use_polarity
        if use_polarity:
            self.polarity_head = nn.Conv2d(features[0], 1, kernel_size=1)

    def forward(self, batched_inputs: Dict[str, torch.Tensor]) -> Dict[str, Optional[torch.Tensor]]:
        data = batched_inputs["data"]
        device = next(self.parameters()).device
        data = data.to(device, non_blocking=True)
        data = moving_normalize(data)

        feats = self.encoder(data)
        x = self.decoder(feats)
        logits = self.phase_head(x)

        output = {"phase": torch.softmax(logits, dim=1), "loss": None}
        if self.use_polarity:
            output["polarity"] = torch.sigmoid(self.polarity_head(x))

        if self.training or "phase_pick" in batched_inputs:
            target = batched_inputs["phase_pick"].to(device, non_blocking=True)
            mask = batched_inputs.get("phase_mask")
            mask = mask.to(device) if mask is not None else None
            output["loss"] = self.losses(logits, target, mask)
            if self.use_polarity and "polarity" in batched_inputs:
                pol = batched_inputs["polarity"].to(device)
                pol_mask = batched_inputs["polarity_mask"].to(device)
                output["loss"] = output["loss"] + self.polarity_loss(output["polarity"], pol, pol_mask)
        return output

    @staticmethod
    def losses(logits, target, mask=None):
        # cross entropy against soft (Gaussian) labels
        log_p = F.log_softmax(logits.float(), dim=1)
        loss = -(target * log_p).sum(dim=1)
        if mask is not None:
            loss = (loss * mask).sum() / mask.sum().clamp(min=1)
        else:
            loss = loss.mean()
        return loss

    @staticmethod
    def polarity_loss(pred, target, mask):
        loss = F.binary_cross_entropy(pred.float(), target, reduction="none")
        return (loss * mask).sum() / mask.sum().clamp(min=1)


def phasenet(*args, **kwargs) -> PhaseNet:
    return PhaseNet(*args, cfg="phasenet", **kwargs)


def phasenet_das(*args, **kwargs) -> PhaseNet:
    return PhaseNet(*args, cfg="phasenet_das", in_channels=1, **kwargs)


def build_model(name: str, checkpoint: Optional[str] = None, **kwargs) -> PhaseNet:
    model = {"phasenet": phasenet, "phasenet_das": phasenet_das}[name](**kwargs)
    if checkpoint is not None:
        state = torch.load(checkpoint, map_location="cpu")
        state = state.get("model", state)
        model.load_state_dict(state)
    return model


if __name__ == "__main__":
    # quick shape / speed check on a GPU
    import time

    model = phasenet(in_channels=3).cuda().eval()
    x = {"data": torch.randn(16, 3, 3000, 1).cuda()}
    with torch.no_grad():
        for _ in range(3):
            model(x)
        torch.cuda.synchronize()  # warm-up done
        t0 = time.time()
        for _ in range(20):
            out = model(x)
        torch.cuda.synchronize()
    print(out["phase"].shape, f"{(time.time() - t0) / 20 * 1000:.1f} ms/batch")
