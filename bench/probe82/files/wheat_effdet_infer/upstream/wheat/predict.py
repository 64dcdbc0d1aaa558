"""Global Wheat Detection - EfficientDet-D5 inference with flip/rot TTA, soft-NMS and WBF.

Soft-NMS runs through a small JIT-compiled CUDA extension (csrc/soft_nms*.{cpp,cu}) when it
builds, and falls back to the numpy implementation otherwise. Weighted boxes fusion across TTA
views and folds comes from the ``ensemble_boxes`` package (CPU).
"""
import glob
import os
import warnings

import cv2
import numpy as np
import pandas as pd
import torch
import torchvision
from ensemble_boxes import weighted_boxes_fusion
from effdet import DetBenchPredict, EfficientDet, get_efficientdet_config
from effdet.efficientdet import HeadNet
from torchvision.ops import batched_nms

_HERE = os.path.dirname(os.path.abspath(__file__))
_ext = None

IMG_SIZE = 1024
SCORE_THR = 0.22
IOU_THR = 0.44
SKIP_THR = 0.43


def _load_soft_nms_ext():
    global _ext
    if _ext is None:
        try:
            from torch.utils.cpp_extension import load
            _ext = load(
                name="soft_nms_ext",
                sources=[os.path.join(_HERE, "csrc", "soft_nms.cpp"),
                         os.path.join(_HERE, "csrc", "soft_nms_kernel.cu")],
                extra_cuda_cflags=["-O3", "--expt-relaxed-constexpr"],
                verbose=False,
            )
        except (OSError, RuntimeError, ImportError) as e:
            warnings.warn(f"soft_nms CUDA extension unavailable ({e}); using the numpy version")
            _ext = False
    return _ext


def soft_nms_numpy(boxes, scores, sigma=0.5, thresh=0.001):
    boxes, scores = boxes.copy(), scores.copy()
    n = len(boxes)
    idxs = np.arange(n)
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    for i in range(n):
        maxpos = i + np.argmax(scores[i:])
        boxes[[i, maxpos]], scores[[i, maxpos]] = boxes[[maxpos, i]], scores[[maxpos, i]]
        idxs[[i, maxpos]], areas[[i, maxpos]] = idxs[[maxpos, i]], areas[[maxpos, i]]
        xx1 = np.maximum(boxes[i, 0], boxes[i + 1:, 0])
        yy1 = np.maximum(boxes[i, 1], boxes[i + 1:, 1])
        xx2 = np.minimum(boxes[i, 2], boxes[i + 1:, 2])
        yy2 = np.minimum(boxes[i, 3], boxes[i + 1:, 3])
        inter = np.maximum(0.0, xx2 - xx1) * np.maximum(0.0, yy2 - yy1)
        ovr = inter / (areas[i] + areas[i + 1:] - inter)
        scores[i + 1:] *= np.exp(-(ovr * ovr) / sigma)
    keep = idxs[scores > thresh]
    return keep


def soft_nms(boxes, scores, sigma=0.5, thresh=0.001):
    ext = _load_soft_nms_ext()
    if ext and boxes.is_cuda:
        return ext.soft_nms(boxes.contiguous(), scores.contiguous(), sigma, thresh)
    keep = soft_nms_numpy(boxes.cpu().numpy(), scores.cpu().numpy(), sigma, thresh)
    return torch.as_tensor(keep, device=boxes.device)


def load_net(checkpoint_path):
    config = get_efficientdet_config("tf_efficientdet_d5")
    net = EfficientDet(config, pretrained_backbone=False)
    config.num_classes = 1
    config.image_size = [IMG_SIZE, IMG_SIZE]
    net.class_net = HeadNet(config, num_outputs=config.num_classes)
    checkpoint = torch.load(checkpoint_path)
    net.load_state_dict(checkpoint["model_state_dict"])
    del checkpoint
    net = DetBenchPredict(net)
    net.eval()
    return net.cuda()


class TTAHorizontalFlip:
    def augment(self, images):
        return images.flip(3)

    def deaugment_boxes(self, boxes):
        boxes[:, [0, 2]] = IMG_SIZE - boxes[:, [2, 0]]
        return boxes


class TTAVerticalFlip:
    def augment(self, images):
        return images.flip(2)

    def deaugment_boxes(self, boxes):
        boxes[:, [1, 3]] = IMG_SIZE - boxes[:, [3, 1]]
        return boxes


class TTARotate90:
    def augment(self, images):
        return torch.rot90(images, 1, (2, 3))

    def deaugment_boxes(self, boxes):
        res = boxes.copy()
        res[:, [0, 2]] = IMG_SIZE - boxes[:, [1, 3]]
        res[:, [1, 3]] = boxes[:, [2, 0]]
        return res


class TTACompose:
    def __init__(self, transforms):
        self.transforms = transforms

    def augment(self, images):
        for t in self.transforms:
            images = t.augment(images)
        return images

    def deaugment_boxes(self, boxes):
        for t in reversed(self.transforms):
            boxes = t.deaugment_boxes(boxes)
        return boxes


TTA_LIST = [TTACompose([]), TTACompose([TTAHorizontalFlip()]), TTACompose([TTAVerticalFlip()]),
            TTACompose([TTARotate90()]), TTACompose([TTAHorizontalFlip(), TTARotate90()])]


@torch.no_grad()
def predict_views(nets, images):
    """-> per image: list of (boxes, scores) from every net x TTA view, boxes normalised to [0,1]."""
    images = torch.stack(images).cuda().float()
    per_image = [[] for _ in range(images.shape[0])]
    for net in nets:
        for tta in TTA_LIST:
            dets = net(tta.augment(images.clone()), img_info={
                "img_scale": torch.ones(images.shape[0], device=images.device),
                "img_size": torch.tensor([[IMG_SIZE, IMG_SIZE]] * images.shape[0], device=images.device)})
            for i in range(images.shape[0]):
                d = dets[i]
                boxes, scores = d[:, :4], d[:, 4]
                keep = batched_nms(boxes, scores, torch.zeros_like(scores, dtype=torch.long), 0.6)
                keep = keep[scores[keep] > SCORE_THR]
                keep = keep[soft_nms(boxes[keep], scores[keep])]
                b = tta.deaugment_boxes(boxes[keep].cpu().numpy().copy())
                per_image[i].append((np.clip(b / IMG_SIZE, 0, 1), scores[keep].cpu().numpy()))
    return per_image


def fuse(views):
    boxes = [v[0].tolist() for v in views]
    scores = [v[1].tolist() for v in views]
    labels = [np.ones(len(s)).tolist() for s in scores]
    b, s, _ = weighted_boxes_fusion(boxes, scores, labels, iou_thr=IOU_THR, skip_box_thr=SKIP_THR)
    return (b * IMG_SIZE).astype(np.int32), s


def iou_matrix(gts, preds):
    """Pairwise IoU of (N, 4) and (M, 4) xywh integer boxes (numpy)."""
    g = gts[:, None, :]
    p = preds[None, :, :]
    x1 = np.maximum(g[..., 0], p[..., 0])
    y1 = np.maximum(g[..., 1], p[..., 1])
    x2 = np.minimum(g[..., 0] + g[..., 2], p[..., 0] + p[..., 2])
    y2 = np.minimum(g[..., 1] + g[..., 3], p[..., 1] + p[..., 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    union = g[..., 2] * g[..., 3] + p[..., 2] * p[..., 3] - inter
    return inter / np.maximum(union, 1e-9)


def image_precision(gts, preds, thresholds=np.arange(0.5, 0.76, 0.05)):
    """Competition metric for one image: mean over IoU thresholds of TP / (TP + FP + FN).

    ``preds`` must be sorted by descending confidence.
    """
    if len(gts) == 0 and len(preds) == 0:
        return 1.0
    if len(gts) == 0 or len(preds) == 0:
        return 0.0
    ious = iou_matrix(gts, preds)
    scores = []
    for t in thresholds:
        matched_gt = set()
        tp = 0
        for j in range(ious.shape[1]):
            cand = [i for i in np.argsort(-ious[:, j]) if ious[i, j] >= t and i not in matched_gt]
            if cand:
                matched_gt.add(cand[0])
                tp += 1
        fp = ious.shape[1] - tp
        fn = ious.shape[0] - tp
        scores.append(tp / (tp + fp + fn))
    return float(np.mean(scores))


def format_prediction_string(boxes, scores):
    parts = []
    for s, b in zip(scores, boxes):
        parts.append(f"{s:.4f} {b[0]} {b[1]} {b[2] - b[0]} {b[3] - b[1]}")
    return " ".join(parts)


def main(test_dir="../input/global-wheat-detection/test", weights="../input/wheat-effdet5-folds/fold*.bin"):
    nets = [load_net(p) for p in sorted(glob.glob(weights))]
    rows = []
    paths = sorted(glob.glob(os.path.join(test_dir, "*.jpg")))
    for start in range(0, len(paths), 4):
        chunk = paths[start:start + 4]
        images = []
        for p in chunk:
            img = cv2.cvtColor(cv2.imread(p), cv2.COLOR_BGR2RGB).astype(np.float32) / 255.0
            images.append(torch.from_numpy(img).permute(2, 0, 1))
        for p, views in zip(chunk, predict_views(nets, images)):
            boxes, scores = fuse(views)
            rows.append({"image_id": os.path.basename(p)[:-4], "PredictionString": format_prediction_string(boxes, scores)})
    pd.DataFrame(rows).to_csv("submission.csv", index=False)
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
