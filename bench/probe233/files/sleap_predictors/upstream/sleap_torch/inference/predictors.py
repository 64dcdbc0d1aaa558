"""Predictors for running inference with trained SLEAP models (PyTorch backend).

The public entry points mirror ``sleap.load_model`` and ``sleap-track``:

    >>> predictor = load_model(["models/centroid", "models/centered_instance"])
    >>> labels = predictor.predict_video("session1.mp4")

A predictor owns one or two trained models, the preprocessing configuration they
were trained with, and the peak-finding/grouping logic needed to turn confidence
maps into ``Instance`` objects.
"""
from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Iterator, List, Optional, Union

import numpy as np
import torch
import torch.nn.functional as F

from sleap_torch.config import load_config
from sleap_torch.data.video import VideoReader
from sleap_torch.inference.peak_finding import find_global_peaks, find_local_peaks
from sleap_torch.inference.paf_grouping import PAFScorer
from sleap_torch.io import Instance, LabeledFrame, Labels, save_labels
from sleap_torch.models import build_model

logger = logging.getLogger(__name__)


def _resolve_device(device: Union[str, int, torch.device]) -> torch.device:
    """Turns the --gpu / device argument into a torch.device.

    ``"auto"`` selects the first GPU if there is one, an integer selects a GPU by
    index (same convention as SLEAP's ``--gpu`` flag), anything else is passed to
    ``torch.device``.
    """
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda:0")
        return torch.device("cpu")
    if isinstance(device, int):
        return torch.device(f"cuda:{device}")
    return torch.device(device)


def _load_trained_model(model_dir: Path, device: torch.device):
    cfg = load_config(model_dir / "training_config.json")
    model = build_model(cfg.model)
    ckpt = torch.load(model_dir / "best_model.pt", map_location=device)
    model.load_state_dict(ckpt["model_state_dict"])
    model.to(device)
    model.eval()
    return cfg, model


class Predictor:
    """Base class for predictors."""

    def __init__(
        self,
        device: Union[str, int] = "auto",
        batch_size: int = 4,
        peak_threshold: float = 0.2,
        integral_refinement: bool = True,
        fp16: bool = False,
    ):
        self.device = _resolve_device(device)
        self.batch_size = batch_size
        self.peak_threshold = peak_threshold
        self.refinement = "integral" if integral_refinement else None
        self.fp16 = fp16
        self.input_scale = 1.0

    def preprocess(self, frames: np.ndarray) -> torch.Tensor:
        """uint8 (N, H, W, C) frames -> float (N, C, H, W) on the target device"""
        imgs = torch.from_numpy(frames).to(self.device, non_blocking=True)
        imgs = imgs.permute(0, 3, 1, 2).float() / 255.0
        if self.input_scale != 1.0:
            imgs = F.interpolate(
                imgs, scale_factor=self.input_scale, mode="bilinear", align_corners=False
            )
        return imgs

    def _forward(self, model: torch.nn.Module, imgs: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16):
            out = model(imgs)
        return out.float()

    def predict_batch(self, frames: np.ndarray) -> List[List[Instance]]:
        raise NotImplementedError

    def _iter_batches(self, video: VideoReader) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        inds = []
        frames = []
        for idx, frame in video:
            inds.append(idx)
            frames.append(frame)
            if len(frames) == self.batch_size:
                yield np.array(inds), np.stack(frames)
                inds, frames = [], []
        if frames:
            yield np.array(inds), np.stack(frames)

    def predict_video(self, video_path: Union[str, Path], chunk_size: int = 2000) -> Labels:
        video = VideoReader(str(video_path), grayscale=self.grayscale)
        labeled_frames = []
        t0 = time.time()
        for n, (inds, frames) in enumerate(self._iter_batches(video)):
            instances = self.predict_batch(frames)
            for frame_idx, frame_instances in zip(inds, instances):
                labeled_frames.append(
                    LabeledFrame(video=video.path, frame_idx=int(frame_idx), instances=frame_instances)
                )
            if (n + 1) * self.batch_size % chunk_size == 0:
                # keep the allocator from growing over very long recordings
                torch.cuda.empty_cache()
                elapsed = time.time() - t0
                logger.info(f"{len(labeled_frames)} frames, {len(labeled_frames) / elapsed:.1f} FPS")
        return Labels(labeled_frames=labeled_frames)


class SingleInstancePredictor(Predictor):
    """One animal per frame: take the global peak of each body part channel."""

    def __init__(self, model_dir: Union[str, Path], **kwargs):
        super().__init__(**kwargs)
        self.cfg, self.model = _load_trained_model(Path(model_dir), self.device)
        self.input_scale = self.cfg.data.preprocessing.input_scaling
        self.grayscale = self.cfg.data.preprocessing.ensure_grayscale
        self.output_stride = self.cfg.model.heads.single_instance.output_stride
        self.node_names = self.cfg.model.heads.single_instance.part_names

    def predict_batch(self, frames: np.ndarray) -> List[List[Instance]]:
        imgs = self.preprocess(frames)
        cms = self._forward(self.model, imgs)
        peaks, vals = find_global_peaks(cms, threshold=self.peak_threshold, refinement=self.refinement)
        peaks = peaks * self.output_stride / self.input_scale
        peaks = peaks.cpu().numpy()
        vals = vals.cpu().numpy()
        return [
            [Instance.from_numpy(points=peaks[i], scores=vals[i], node_names=self.node_names)]
            for i in range(len(frames))
        ]


class TopDownPredictor(Predictor):
    """Centroid model to find animals, then a centered-instance model per crop."""

    def __init__(self, centroid_dir: Union[str, Path], instance_dir: Union[str, Path], **kwargs):
        super().__init__(**kwargs)
        self.centroid_cfg, self.centroid_model = _load_trained_model(Path(centroid_dir), self.device)
        self.instance_cfg, self.instance_model = _load_trained_model(Path(instance_dir), self.device)
        self.input_scale = self.centroid_cfg.data.preprocessing.input_scaling
        self.grayscale = self.centroid_cfg.data.preprocessing.ensure_grayscale
        self.crop_size = self.instance_cfg.data.instance_cropping.crop_size
        self.centroid_stride = self.centroid_cfg.model.heads.centroid.output_stride
        self.instance_stride = self.instance_cfg.model.heads.centered_instance.output_stride
        self.node_names = self.instance_cfg.model.heads.centered_instance.part_names
        self.max_instances = None

    def predict_batch(self, frames: np.ndarray) -> List[List[Instance]]:
        imgs = self.preprocess(frames)
        centroid_cms = self._forward(self.centroid_model, imgs)
        c_points, c_vals, c_sample, _ = find_local_peaks(
            centroid_cms, threshold=self.peak_threshold, refinement=self.refinement
        )
        c_points = c_points * self.centroid_stride / self.input_scale

        results: List[List[Instance]] = [[] for _ in range(len(frames))]
        if len(c_points) == 0:
            return results

        full_res = torch.from_numpy(frames).to(self.device).permute(0, 3, 1, 2).float() / 255.0
        half = self.crop_size // 2
        padded = F.pad(full_res, (half, half, half, half))
        crops = []
        for (x, y), s in zip(c_points.round().long().tolist(), c_sample.tolist()):
            crops.append(padded[s, :, y : y + self.crop_size, x : x + self.crop_size])
        crops = torch.stack(crops)

        inst_cms = self._forward(self.instance_model, crops)
        peaks, vals = find_global_peaks(inst_cms, threshold=self.peak_threshold, refinement=self.refinement)
        peaks = peaks * self.instance_stride + (c_points[:, None, :] - half)

        for p, v, s in zip(peaks.cpu().numpy(), vals.cpu().numpy(), c_sample.tolist()):
            results[s].append(Instance.from_numpy(points=p, scores=v, node_names=self.node_names))
        return results


def load_model(
    model_paths: Union[str, List[str]],
    device: Union[str, int] = "auto",
    batch_size: int = 4,
    peak_threshold: float = 0.2,
    fp16: bool = False,
) -> Predictor:
    """Load one or more trained models and return the matching predictor."""
    if isinstance(model_paths, str):
        model_paths = [model_paths]
    kwargs = dict(device=device, batch_size=batch_size, peak_threshold=peak_threshold, fp16=fp16)
    if len(model_paths) == 1:
        return SingleInstancePredictor(model_paths[0], **kwargs)
    if len(model_paths) == 2:
        centroid, instance = sorted(model_paths, key=lambda p: "centered_instance" in p)
        return TopDownPredictor(centroid, instance, **kwargs)
    raise ValueError(f"Expected 1 or 2 model paths, got {len(model_paths)}")


def main(args: Optional[list] = None) -> None:
    parser = argparse.ArgumentParser(description="sleap-track (PyTorch backend)")
    parser.add_argument("video", help="Video to run inference on")
    parser.add_argument("-m", "--model", action="append", required=True, help="Model folder(s)")
    parser.add_argument("-o", "--output", default=None, help="Output .slp path")
    parser.add_argument("--gpu", default="auto", help="GPU index to use, 'auto' or 'cpu'")
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--peak_threshold", type=float, default=0.2)
    parser.add_argument("--fp16", action="store_true", help="Run models in half precision")
    parsed = parser.parse_args(args)

    logging.basicConfig(level=logging.INFO)
    gpu = int(parsed.gpu) if parsed.gpu.isdigit() else parsed.gpu
    predictor = load_model(
        parsed.model,
        device=gpu,
        batch_size=parsed.batch_size,
        peak_threshold=parsed.peak_threshold,
        fp16=parsed.fp16,
    )
    logger.info(f"Running inference on {predictor.device}")
    labels = predictor.predict_video(parsed.video)
    output = parsed.output or str(Path(parsed.video).with_suffix(".predictions.slp"))
    save_labels(labels, output)
    logger.info(f"Saved predictions to {output}")


if __name__ == "__main__":
    main()
