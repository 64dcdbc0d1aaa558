"""Test-time augmentation for classification and segmentation models.

    predictor = TTAPredictor(models, transforms=("id", "hflip", "vflip"), scales=(1.0, 1.25))
    probs = predictor.predict_loader(loader)

Segmentation outputs are de-augmented before merging; classification outputs are merged directly.
For the d4 group on segmentation we also support ``ttach`` when it is installed.
"""
from typing import Iterable, List, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import ttach as tta
except ImportError:  # optional
    tta = None

_FWD = {
    "id": lambda x: x,
    "hflip": lambda x: x.flip(-1),
    "vflip": lambda x: x.flip(-2),
    "hvflip": lambda x: x.flip(-1).flip(-2),
    "rot90": lambda x: torch.rot90(x, 1, dims=(-2, -1)),
    "rot270": lambda x: torch.rot90(x, 3, dims=(-2, -1)),
    "transpose": lambda x: x.transpose(-2, -1),
}
_INV = {
    "id": lambda x: x,
    "hflip": lambda x: x.flip(-1),
    "vflip": lambda x: x.flip(-2),
    "hvflip": lambda x: x.flip(-2).flip(-1),
    "rot90": lambda x: torch.rot90(x, 3, dims=(-2, -1)),
    "rot270": lambda x: torch.rot90(x, 1, dims=(-2, -1)),
    "transpose": lambda x: x.transpose(-2, -1),
}


def merge(outputs: List[torch.Tensor], mode: str = "mean") -> torch.Tensor:
    stacked = torch.stack(outputs)
    if mode == "mean":
        return stacked.mean(0)
    if mode == "gmean":
        return stacked.clamp(min=1e-7).log().mean(0).exp()
    if mode == "max":
        return stacked.max(0).values
    raise ValueError(mode)


class TTAPredictor:
    def __init__(self, models: Sequence[nn.Module], transforms: Iterable[str] = ("id", "hflip"),
                 scales: Iterable[float] = (1.0,), task: str = "cls", activation: str = "sigmoid",
                 merge_mode: str = "mean", amp: bool = True, device: str = "cuda"):
        self.device = torch.device(device)
        self.models = [m.to(self.device).eval() for m in models]
        self.transforms = list(transforms)
        self.scales = list(scales)
        self.task = task
        self.activation = activation
        self.merge_mode = merge_mode
        self.amp = amp

    def _act(self, x):
        if self.activation == "sigmoid":
            return torch.sigmoid(x)
        if self.activation == "softmax":
            return torch.softmax(x, dim=1)
        return x

    @torch.no_grad()
    def predict_batch(self, images: torch.Tensor) -> torch.Tensor:
        images = images.to(self.device, non_blocking=True)
        h, w = images.shape[-2:]
        outs = []
        with torch.cuda.amp.autocast(enabled=self.amp):
            for model in self.models:
                for s in self.scales:
                    x = images if s == 1.0 else F.interpolate(images, scale_factor=s, mode="bilinear",
                                                              align_corners=False)
                    for name in self.transforms:
                        y = model(_FWD[name](x)).float()
                        if self.task == "seg":
                            y = _INV[name](y)
                            if s != 1.0:
                                y = F.interpolate(y, size=(h, w), mode="bilinear", align_corners=False)
                        outs.append(self._act(y))
        return merge(outs, self.merge_mode)

    def predict_loader(self, loader) -> np.ndarray:
        preds = []
        for batch in loader:
            images = batch[0] if isinstance(batch, (list, tuple)) else batch
            preds.append(self.predict_batch(images).cpu().numpy())
        return np.concatenate(preds)


def five_crop(images: torch.Tensor, crop: int) -> List[torch.Tensor]:
    """Four corners + centre crops of a (B, C, H, W) batch (classification TTA at a larger input size)."""
    h, w = images.shape[-2:]
    ch, cw = (h - crop) // 2, (w - crop) // 2
    return [
        images[..., :crop, :crop],
        images[..., :crop, w - crop:],
        images[..., h - crop:, :crop],
        images[..., h - crop:, w - crop:],
        images[..., ch:ch + crop, cw:cw + crop],
    ]


def d4_segmentation_wrapper(model: nn.Module) -> nn.Module:
    """8-way dihedral TTA via ttach when available, else our own implementation."""
    if tta is not None:
        return tta.SegmentationTTAWrapper(model, tta.aliases.d4_transform(), merge_mode="mean")
    return _D4Wrapper(model)


class _D4Wrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        outs = []
        for k in range(4):
            for flip in (False, True):
                xi = torch.rot90(x, k, dims=(-2, -1))
                xi = xi.flip(-1) if flip else xi
                y = self.model(xi)
                y = y.flip(-1) if flip else y
                outs.append(torch.rot90(y, -k, dims=(-2, -1)))
        return torch.stack(outs).mean(0)
