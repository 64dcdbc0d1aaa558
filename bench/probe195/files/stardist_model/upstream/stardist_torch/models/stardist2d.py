"""StarDist2D in PyTorch: a U-Net predicting per-pixel object probability and
radial distances to the object boundary along n_rays directions."""
import json
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from csbdeep.utils import normalize

from ..ops import non_maximum_suppression, polygons_to_label
from .unet import UNet2D


class Config2D:
    def __init__(self, n_rays=32, n_channel_in=1, grid=(2, 2), unet_n_depth=3,
                 unet_n_filter_base=32, train_patch_size=(256, 256), train_batch_size=4,
                 train_learning_rate=3e-4, train_epochs=400, train_loss_weights=(1, 0.2),
                 use_gpu=True, **kwargs):
        self.n_rays = n_rays
        self.n_channel_in = n_channel_in
        self.grid = tuple(grid)
        self.unet_n_depth = unet_n_depth
        self.unet_n_filter_base = unet_n_filter_base
        self.train_patch_size = tuple(train_patch_size)
        self.train_batch_size = train_batch_size
        self.train_learning_rate = train_learning_rate
        self.train_epochs = train_epochs
        self.train_loss_weights = tuple(train_loss_weights)
        # use_gpu is kept for compatibility with the keras StarDist configs
        self.use_gpu = use_gpu
        for k, v in kwargs.items():
            setattr(self, k, v)

    def to_dict(self):
        return dict(vars(self))

    @classmethod
    def from_json(cls, path):
        with open(path) as f:
            return cls(**json.load(f))


class StarDistNet(nn.Module):
    def __init__(self, config: Config2D):
        super().__init__()
        self.config = config
        self.backbone = UNet2D(config.n_channel_in, config.unet_n_filter_base, depth=config.unet_n_depth)
        nf = config.unet_n_filter_base
        pool = int(np.prod(config.grid))
        self.features = nn.Sequential(
            nn.Conv2d(nf, 128, 3, padding=1, stride=config.grid[0] if pool > 1 else 1),
            nn.ReLU(inplace=True),
        )
        self.prob_head = nn.Conv2d(128, 1, 1)
        self.dist_head = nn.Conv2d(128, config.n_rays, 1)

    def forward(self, x):
        f = self.features(self.backbone(x))
        prob = torch.sigmoid(self.prob_head(f))
        dist = F.relu(self.dist_head(f))
        return prob, dist


class StarDist2D:
    """High level model wrapper (training state, prediction, export)."""

    def __init__(self, config=None, name=None, basedir="models", device=None):
        self.config = config if config is not None else Config2D()
        self.name = name
        self.basedir = Path(basedir)
        if device is None:
            device = torch.device("cuda" if torch.cuda.is_available() and self.config.use_gpu else "cpu")
        self.device = torch.device(device)
        self.net = StarDistNet(self.config).to(self.device)
        self.thresholds = {"prob": 0.5, "nms": 0.4}

    @property
    def logdir(self):
        return self.basedir / self.name

    @classmethod
    def from_pretrained(cls, name_or_path, device=None):
        path = Path(name_or_path)
        config = Config2D.from_json(path / "config.json")
        model = cls(config, name=path.name, basedir=path.parent, device=device)
        state = torch.load(path / "weights_best.pt", map_location=model.device)
        model.net.load_state_dict(state["model"])
        if (path / "thresholds.json").exists():
            with open(path / "thresholds.json") as f:
                model.thresholds = json.load(f)
        model.net.eval()
        return model

    def save(self, tag="best"):
        self.logdir.mkdir(parents=True, exist_ok=True)
        torch.save({"model": self.net.state_dict()}, self.logdir / f"weights_{tag}.pt")
        with open(self.logdir / "config.json", "w") as f:
            json.dump(self.config.to_dict(), f, indent=2)

    @torch.no_grad()
    def predict(self, img, axes="YX", normalizer=None, n_tiles=None, show_timing=False):
        """Return (prob, dist) maps for a single 2D image."""
        self.net.eval()
        x = normalize(img, 1, 99.8, axis=(0, 1)) if normalizer is None else normalizer(img)
        if x.ndim == 2:
            x = x[None]
        x = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))[None].to(self.device)

        # pad to a multiple of the U-Net downsampling factor
        div = 2 ** self.config.unet_n_depth * max(self.config.grid)
        h, w = x.shape[-2:]
        ph, pw = (-h) % div, (-w) % div
        x = F.pad(x, (0, pw, 0, ph), mode="reflect")

        if show_timing and self.device.type == "cuda":  # flush queued kernels before timing
            torch.cuda.synchronize(self.device)
        t0 = time.time()
        prob, dist = self.net(x)
        if show_timing and self.device.type == "cuda":
            torch.cuda.synchronize()
        if show_timing:
            print(f"network: {time.time() - t0:.3f}s on {self.device}")

        gy, gx = self.config.grid
        prob = prob[..., : (h + gy - 1) // gy, : (w + gx - 1) // gx]
        dist = dist[..., : (h + gy - 1) // gy, : (w + gx - 1) // gx]
        return prob[0, 0], dist[0].permute(1, 2, 0)

    @torch.no_grad()
    def predict_instances(self, img, prob_thresh=None, nms_thresh=None, return_predict=False, **kwargs):
        prob_thresh = self.thresholds["prob"] if prob_thresh is None else prob_thresh
        nms_thresh = self.thresholds["nms"] if nms_thresh is None else nms_thresh

        prob, dist = self.predict(img, **kwargs)
        gy, gx = self.config.grid
        ys, xs = torch.nonzero(prob > prob_thresh, as_tuple=True)
        points = torch.stack([ys * gy, xs * gx], dim=1).float()
        scores = prob[ys, xs]
        dists = dist[ys, xs] * torch.tensor([gy], device=dist.device, dtype=dist.dtype)

        keep = non_maximum_suppression(dists, scores, points, prob_thresh=prob_thresh, nms_thresh=nms_thresh)
        labels = polygons_to_label(dists[keep], points[keep], img.shape[:2], prob=scores[keep])
        labels = labels.cpu().numpy().astype(np.int32)

        details = {
            "coord": dists[keep].cpu().numpy(),
            "points": points[keep].cpu().numpy().astype(np.int32),
            "prob": scores[keep].cpu().numpy(),
        }
        if return_predict:
            return (labels, details), (prob.cpu().numpy(), dist.cpu().numpy())
        return labels, details

    def optimize_thresholds(self, X_val, Y_val, nms_threshs=(0.3, 0.4, 0.5), iou_threshs=(0.3, 0.5, 0.7)):
        """Grid search for prob / nms thresholds on validation data (mean F1 over iou_threshs)."""
        from stardist.matching import matching_dataset

        preds = [self.predict(x) for x in X_val]
        best = (-1, None)
        for nms in nms_threshs:
            for prob_t in np.linspace(0.3, 0.8, 11):
                Y_pred = []
                for (prob, dist), x in zip(preds, X_val):
                    lbl, _ = self.predict_instances(x, prob_thresh=prob_t, nms_thresh=nms)
                    Y_pred.append(lbl)
                stats = [matching_dataset(Y_val, Y_pred, thresh=t, show_progress=False).f1 for t in iou_threshs]
                score = float(np.mean(stats))
                if score > best[0]:
                    best = (score, {"prob": float(prob_t), "nms": float(nms)})
        self.thresholds = best[1]
        with open(self.logdir / "thresholds.json", "w") as f:
            json.dump(self.thresholds, f)
        return self.thresholds
