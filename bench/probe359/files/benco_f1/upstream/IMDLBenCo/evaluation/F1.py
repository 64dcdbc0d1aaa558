import torch
import torch.distributed as dist

from .abstract_class import AbstractEvaluator


def _gather_cat(t):
    """all_gather a 1-D tensor whose length may differ per rank."""
    if not (dist.is_available() and dist.is_initialized()):
        return t
    world = dist.get_world_size()
    size = torch.tensor([t.numel()], device=t.device, dtype=torch.long)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size)
    max_size = int(max(s.item() for s in sizes))
    padded = torch.zeros(max_size, device=t.device, dtype=t.dtype)
    padded[:t.numel()] = t
    out = [torch.zeros_like(padded) for _ in range(world)]
    dist.all_gather(out, padded)
    return torch.cat([o[:int(s.item())] for o, s in zip(out, sizes)])


class PixelF1(AbstractEvaluator):
    """Per-image pixel-level F1, averaged over the dataset.

    mode:
        "origin"  - threshold the prediction, compare to the mask
        "reverse" - also score the inverted prediction and keep the better one
        "double"  - report both
    """

    def __init__(self, threshold=0.5, mode="origin") -> None:
        super().__init__()
        self.name = "pixel-level F1"
        self.desc = "pixel-level F1"
        self.threshold = threshold
        self.mode = mode
        self.predict = []

    def _f1(self, predict, mask, shape_mask=None):
        predict = (predict > self.threshold).float()
        if shape_mask is not None:
            predict = predict * shape_mask
            mask = mask * shape_mask
        tp = torch.sum(predict * mask, dim=(1, 2, 3))
        fp = torch.sum(predict * (1 - mask), dim=(1, 2, 3))
        fn = torch.sum((1 - predict) * mask, dim=(1, 2, 3))
        return 2 * tp / (2 * tp + fp + fn + 1e-9)

    def batch_update(self, predict, mask, shape_mask=None, *args, **kwargs):
        self._check_pixel_level_params(predict, mask)
        f1 = self._f1(predict, mask, shape_mask)
        if self.mode in ("reverse", "double"):
            f1_rev = self._f1(1 - predict, mask, shape_mask)
            f1 = torch.maximum(f1, f1_rev) if self.mode == "reverse" else f1
        self.predict.append(f1.detach())
        return f1

    def epoch_update(self):
        if len(self.predict) == 0:
            return 0.0
        local = torch.cat(self.predict, dim=0)
        gathered = _gather_cat(local)
        return gathered.mean().item()

    def recovery(self):
        self.predict = []


class ImageF1(AbstractEvaluator):
    def __init__(self, threshold=0.5) -> None:
        super().__init__()
        self.name = "image-level F1"
        self.desc = "image-level F1"
        self.threshold = threshold
        self.predict = []
        self.label = []

    def batch_update(self, predict_label, label, *args, **kwargs):
        self._check_image_level_params(predict_label, label)
        self.predict.append(predict_label.detach().float())
        self.label.append(label.detach().float())
        return None

    def epoch_update(self):
        predict = _gather_cat(torch.cat(self.predict, dim=0))
        label = _gather_cat(torch.cat(self.label, dim=0))
        predict = (predict > self.threshold).float()
        tp = torch.sum(predict * label)
        fp = torch.sum(predict * (1 - label))
        fn = torch.sum((1 - predict) * label)
        return (2 * tp / (2 * tp + fp + fn + 1e-9)).item()

    def recovery(self):
        self.predict = []
        self.label = []
