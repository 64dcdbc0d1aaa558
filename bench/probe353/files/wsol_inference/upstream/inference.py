"""
Copyright (c) 2020-present NAVER Corp.
MIT license
"""

import os
from os.path import dirname as ospd
from os.path import join as ospj

import cv2
import numpy as np
import torch

from data_loaders import configure_metadata
from evaluation import BoxEvaluator
from evaluation import MaskEvaluator
from evaluation import configure_metadata
from util import t2n

_IMAGENET_MEAN = [0.485, .456, .406]
_IMAGENET_STDDEV = [.229, .224, .225]
_RESIZE_LENGTH = 224

# set WSOL_EVAL_CPU=1 to score CAMs that were already dumped as .npy without a GPU
_EVAL_ON_CPU = os.environ.get("WSOL_EVAL_CPU", "0") == "1"


def normalize_scoremap(cam):
    """
    Args:
        cam: numpy.ndarray(size=(H, W), dtype=np.float)
    Returns:
        numpy.ndarray(size=(H, W), dtype=np.float) between 0 and 1.
        If input array is constant, a zero-array is returned.
    """
    if np.isnan(cam).any():
        return np.zeros_like(cam)
    if cam.min() == cam.max():
        return np.zeros_like(cam)
    cam -= cam.min()
    cam /= cam.max()
    return cam


def get_device():
    if _EVAL_ON_CPU or not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda", torch.cuda.current_device())


class CAMComputer(object):
    def __init__(self, model, loader, metadata_root, mask_root,
                 iou_threshold_list, dataset_name, split,
                 multi_contour_eval, cam_curve_interval=.001, log_folder=None):
        self.model = model
        self.model.eval()
        self.loader = loader
        self.split = split
        self.log_folder = log_folder
        self.device = get_device()

        metadata = configure_metadata(metadata_root)
        cam_threshold_list = list(np.arange(0, 1, cam_curve_interval))

        self.evaluator = {"OpenImages": MaskEvaluator,
                          "CUB": BoxEvaluator,
                          "ILSVRC": BoxEvaluator
                          }[dataset_name](metadata=metadata,
                                          dataset_name=dataset_name,
                                          split=split,
                                          cam_threshold_list=cam_threshold_list,
                                          iou_threshold_list=iou_threshold_list,
                                          mask_root=mask_root,
                                          multi_contour_eval=multi_contour_eval)

    def compute_and_evaluate_cams(self):
        print("Computing and evaluating cams.")
        for images, targets, image_ids in self.loader:
            image_size = images.shape[2:]
            images = images.cuda()
            cams = t2n(self.model(images, targets, return_cam=True))
            for cam, image_id in zip(cams, image_ids):
                cam_resized = cv2.resize(cam, image_size,
                                         interpolation=cv2.INTER_CUBIC)
                cam_normalized = normalize_scoremap(cam_resized)
                if self.split in ('val', 'test'):
                    cam_path = ospj(self.log_folder, 'scoremaps', image_id)
                    if not os.path.exists(ospd(cam_path)):
                        os.makedirs(ospd(cam_path))
                    np.save(ospj(cam_path), cam_normalized)
                self.evaluator.accumulate(cam_normalized, image_id)
        return self.evaluator.compute()

    @torch.no_grad()
    def compute_cams_with_tta(self, flip=True):
        """Flip test-time augmentation; runs on self.device (GPU by default)."""
        print("Computing cams with flip TTA on {}.".format(self.device))
        results = {}
        for images, targets, image_ids in self.loader:
            image_size = images.shape[2:]
            images = images.to(self.device, non_blocking=True)
            cams = self.model(images, targets, return_cam=True)
            if flip:
                cams_flip = self.model(images.flip(-1), targets, return_cam=True)
                cams = (cams + cams_flip.flip(-1)) / 2
            cams = t2n(cams)
            for cam, image_id in zip(cams, image_ids):
                cam_resized = cv2.resize(cam, image_size,
                                         interpolation=cv2.INTER_CUBIC)
                results[image_id] = normalize_scoremap(cam_resized)
        return results

    def evaluate_saved_scoremaps(self, scoremap_root):
        """Re-score scoremaps dumped by a previous run (pure numpy, no device needed)."""
        for image_id in self.evaluator.image_ids:
            cam_path = ospj(scoremap_root, image_id + '.npy')
            cam = np.load(cam_path)
            self.evaluator.accumulate(normalize_scoremap(cam), image_id)
        return self.evaluator.compute()


def get_cam_batch(model, images, targets, use_cuda=True):
    """Helper used by the notebooks: returns numpy CAMs for a CPU batch."""
    if use_cuda:
        images = images.cuda(non_blocking=True)
    with torch.no_grad():
        cams = model(images, targets, return_cam=True)
    return t2n(cams)


def visualize_cam(image, cam, alpha=0.5):
    """Overlay a [0,1] CAM on an un-normalized HxWx3 uint8 image."""
    heatmap = cv2.applyColorMap(np.uint8(255 * cam), cv2.COLORMAP_JET)
    heatmap = cv2.cvtColor(heatmap, cv2.COLOR_BGR2RGB)
    overlay = heatmap * alpha + image * (1 - alpha)
    return np.uint8(overlay)


def denormalize(tensor):
    """CHW normalized float tensor (any device) -> HWC uint8 numpy image."""
    image = tensor.detach().cpu().numpy().transpose(1, 2, 0)
    image = image * np.array(_IMAGENET_STDDEV) + np.array(_IMAGENET_MEAN)
    image = np.clip(image * 255, 0, 255)
    return image.astype(np.uint8)


def compute_peak_response(cams, topk=1):
    """Mean of the top-k CAM values per image, a cheap proxy for localization confidence."""
    if torch.is_tensor(cams):
        cams = t2n(cams)
    flat = cams.reshape(cams.shape[0], -1)
    topk = min(topk, flat.shape[1])
    part = np.partition(flat, -topk, axis=1)[:, -topk:]
    return part.mean(axis=1)


def dump_cam_batch(cams, image_ids, out_root):
    """Save already-normalized CAMs (numpy) under out_root/<image_id>.npy."""
    for cam, image_id in zip(cams, image_ids):
        path = ospj(out_root, image_id)
        if not os.path.exists(ospd(path)):
            os.makedirs(ospd(path))
        np.save(path, cam)
