# YOLOv5 orchard fork -- fruit counting and yield estimation
"""
Counts fruit along orchard rows from a video (or an ordered image sequence) taken by a
platform driving along the row, and converts the counts into a per-tree / per-row yield
estimate.

Detections from the YOLOv5 model are associated frame-to-frame with a light IoU tracker so
every fruit is counted once, even though it is visible in several consecutive frames.
Counts are then corrected for occlusion with a per-cultivar visibility factor and
multiplied by the average fruit mass.

Usage:
    $ python yield_estimate.py --weights runs/train/apple_m/weights/best.pt \
        --source /data/orchard/row_07.mp4 --cultivar honeycrisp --device 0
"""

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torchvision

FILE = Path(__file__).resolve()
ROOT = FILE.parents[0]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from models.experimental import attempt_load
from utils.augmentations import letterbox
from utils.general import LOGGER, check_img_size, non_max_suppression, scale_boxes, xyxy2xywh
from utils.torch_utils import select_device, smart_inference_mode, time_sync

# Visibility factors (fraction of fruit visible from one side of the canopy), from hand counts.
VISIBILITY = {'honeycrisp': 0.62, 'gala': 0.58, 'fuji': 0.55, 'valencia': 0.47, 'kensington': 0.71}
# Mean fruit mass in kg.
FRUIT_MASS = {'honeycrisp': 0.24, 'gala': 0.17, 'fuji': 0.22, 'valencia': 0.15, 'kensington': 0.55}


def box_iou_np(a, b):
    """IoU between two sets of xyxy boxes (numpy), shape (len(a), len(b))."""
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)))
    tl = np.maximum(a[:, None, :2], b[None, :, :2])
    br = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(br - tl, 0, None), axis=2)
    area_a = np.prod(a[:, 2:] - a[:, :2], axis=1)
    area_b = np.prod(b[:, 2:] - b[:, :2], axis=1)
    return inter / (area_a[:, None] + area_b[None, :] - inter + 1e-9)


class IoUTracker:
    """Greedy IoU tracker; a track is counted once it has been seen `min_hits` times."""

    def __init__(self, iou_thres=0.3, max_age=5, min_hits=3):
        self.iou_thres = iou_thres
        self.max_age = max_age
        self.min_hits = min_hits
        self.tracks = []  # dicts: box, hits, age, counted, id
        self.next_id = 0
        self.count = 0

    def update(self, boxes):
        ious = box_iou_np(np.array([t['box'] for t in self.tracks]).reshape(-1, 4), boxes)
        matched_tracks, matched_dets = set(), set()
        if ious.size:
            for ti, di in zip(*np.unravel_index(np.argsort(-ious, axis=None), ious.shape)):
                if ious[ti, di] < self.iou_thres:
                    break
                if ti in matched_tracks or di in matched_dets:
                    continue
                t = self.tracks[ti]
                t['box'], t['hits'], t['age'] = boxes[di], t['hits'] + 1, 0
                matched_tracks.add(ti)
                matched_dets.add(di)
                if not t['counted'] and t['hits'] >= self.min_hits:
                    t['counted'] = True
                    self.count += 1
        for ti, t in enumerate(self.tracks):
            if ti not in matched_tracks:
                t['age'] += 1
        self.tracks = [t for t in self.tracks if t['age'] <= self.max_age]
        for di, box in enumerate(boxes):
            if di not in matched_dets:
                self.tracks.append({'box': box, 'hits': 1, 'age': 0, 'counted': False, 'id': self.next_id})
                self.next_id += 1
        return self.count


def frames(source, stride=1):
    """Yields BGR frames from a video file or a directory of images (sorted by name)."""
    p = Path(source)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix.lower() in ('.jpg', '.jpeg', '.png'))
        for i, f in enumerate(files):
            if i % stride == 0:
                yield str(f), cv2.imread(str(f))
    else:
        cap = cv2.VideoCapture(str(p))
        i = 0
        while True:
            ok, frame = cap.read()
            if not ok:
                break
            if i % stride == 0:
                yield f'{p.name}:{i}', frame
            i += 1
        cap.release()


@smart_inference_mode()
def run(weights, source, cultivar, imgsz=1280, conf_thres=0.35, iou_thres=0.45, device='', half=False,
        stride=1, tree_spacing_frames=0, out='runs/yield', profile=False):
    device = select_device(device)
    half &= device.type != 'cpu'  # half precision only supported on CUDA
    model = attempt_load(weights, device=device, fuse=True)
    gs = int(model.stride.max())
    imgsz = check_img_size(imgsz, s=gs)
    if half:
        model.half()
    model.eval()

    # warmup
    if device.type != 'cpu':
        model(torch.zeros(1, 3, imgsz, imgsz).to(device).type_as(next(model.parameters())))

    tracker = IoUTracker()
    per_tree, tree_idx, last_tree_count = [], 0, 0
    dt, seen = [0.0, 0.0, 0.0], 0
    for n, (name, im0) in enumerate(frames(source, stride)):
        t1 = time_sync()
        im = letterbox(im0, imgsz, stride=gs, auto=True)[0]
        im = im.transpose((2, 0, 1))[::-1]  # HWC to CHW, BGR to RGB
        im = torch.from_numpy(np.ascontiguousarray(im)).to(device)
        im = im.half() if half else im.float()
        im /= 255
        im = im[None]
        t2 = time_sync()
        dt[0] += t2 - t1

        if profile:
            torch.cuda.nvtx.range_push('yolov5_forward')
        pred = model(im)[0]
        if profile:
            torch.cuda.nvtx.range_pop()
        t3 = time_sync()
        dt[1] += t3 - t2

        pred = non_max_suppression(pred, conf_thres, iou_thres, max_det=2000)[0]
        dt[2] += time_sync() - t3
        seen += 1

        if len(pred):
            pred[:, :4] = scale_boxes(im.shape[2:], pred[:, :4], im0.shape).round()
        count = tracker.update(pred[:, :4].cpu().numpy())

        # split the row into trees every `tree_spacing_frames` frames (from the odometry-based spacing)
        if tree_spacing_frames and (n + 1) % tree_spacing_frames == 0:
            per_tree.append({'tree': tree_idx, 'count': count - last_tree_count})
            tree_idx += 1
            last_tree_count = count

        if n % 50 == 0:
            LOGGER.info(f'{name}: {len(pred)} detections, {count} fruit counted so far')

    t = tuple(x / max(seen, 1) * 1E3 for x in dt)
    LOGGER.info(f'Speed: %.1fms pre-process, %.1fms inference, %.1fms NMS per frame at shape {(1, 3, imgsz, imgsz)}' % t)

    visibility = VISIBILITY.get(cultivar, 0.6)
    mass = FRUIT_MASS.get(cultivar, 0.2)
    total = tracker.count / visibility
    result = {
        'source': str(source),
        'cultivar': cultivar,
        'raw_count': tracker.count,
        'estimated_count': round(total),
        'estimated_yield_kg': round(total * mass, 1),
        'per_tree': per_tree,
    }
    os.makedirs(out, exist_ok=True)
    stem = Path(source).stem
    with open(Path(out) / f'{stem}_yield.json', 'w') as f:
        json.dump(result, f, indent=2)
    if per_tree:
        with open(Path(out) / f'{stem}_per_tree.csv', 'w', newline='') as f:
            w = csv.DictWriter(f, fieldnames=['tree', 'count'])
            w.writeheader()
            w.writerows(per_tree)
    LOGGER.info(f"Row {stem}: {result['estimated_count']} fruit, {result['estimated_yield_kg']} kg")
    return result


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument('--weights', type=str, required=True, help='model path')
    parser.add_argument('--source', type=str, required=True, help='row video or image directory')
    parser.add_argument('--cultivar', type=str, default='honeycrisp', choices=sorted(VISIBILITY))
    parser.add_argument('--imgsz', '--img', type=int, default=1280, help='inference size (pixels)')
    parser.add_argument('--conf-thres', type=float, default=0.35, help='confidence threshold')
    parser.add_argument('--iou-thres', type=float, default=0.45, help='NMS IoU threshold')
    parser.add_argument('--device', default='', help='cuda device, i.e. 0 or 0,1,2,3 or cpu')
    parser.add_argument('--half', action='store_true', help='use FP16 half-precision inference')
    parser.add_argument('--stride', type=int, default=1, help='process every n-th frame')
    parser.add_argument('--tree-spacing-frames', type=int, default=0, help='frames per tree (0 = row total only)')
    parser.add_argument('--out', type=str, default='runs/yield')
    parser.add_argument('--profile', action='store_true', help='emit NVTX ranges for Nsight Systems')
    return parser.parse_args()


if __name__ == '__main__':
    opt = parse_opt()
    run(**vars(opt))
