"""Top-down whole-body pose inference (RTMDet person detector + RTMPose SimCC head), MMPose-free.

Usage: python -m rtmpose.inferencer --video in.mp4 --det det.pth --pose pose.pth --out out.mp4 --fp16
"""
import argparse
import time
from collections import deque

import cv2
import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torch.backends import cudnn

from .models import build_pose_model, build_detector

MEAN = np.array([123.675, 116.28, 103.53], dtype=np.float32)
STD = np.array([58.395, 57.12, 57.375], dtype=np.float32)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--video", required=True)
    p.add_argument("--det", required=True)
    p.add_argument("--pose", required=True)
    p.add_argument("--out", default="out.mp4")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--det-thr", type=float, default=0.5)
    p.add_argument("--input-size", type=int, nargs=2, default=[192, 256])
    p.add_argument("--simcc-split", type=float, default=2.0)
    return p.parse_args()


def bbox_xyxy2cs(bbox, padding=1.25):
    x1, y1, x2, y2 = bbox[..., 0], bbox[..., 1], bbox[..., 2], bbox[..., 3]
    center = np.stack([x1 + x2, y1 + y2], axis=-1) * 0.5
    scale = np.stack([x2 - x1, y2 - y1], axis=-1) * padding
    return center, scale


def top_down_affine(input_size, center, scale, img):
    w, h = input_size
    aspect = w / h
    bw, bh = scale
    if bw > bh * aspect:
        bh = bw / aspect
    else:
        bw = bh * aspect
    src = np.array([[center[0] - bw / 2, center[1] - bh / 2], [center[0] + bw / 2, center[1] - bh / 2],
                    [center[0] - bw / 2, center[1] + bh / 2]], dtype=np.float32)
    dst = np.array([[0, 0], [w, 0], [0, h]], dtype=np.float32)
    warp = cv2.getAffineTransform(src, dst)
    return cv2.warpAffine(img, warp, (int(w), int(h)), flags=cv2.INTER_LINEAR), np.array([bw, bh])


def decode_simcc(simcc_x, simcc_y, split_ratio):
    x_locs = simcc_x.argmax(dim=-1)
    y_locs = simcc_y.argmax(dim=-1)
    locs = torch.stack([x_locs, y_locs], dim=-1).float() / split_ratio
    vals = torch.minimum(simcc_x.amax(dim=-1), simcc_y.amax(dim=-1))
    return locs, vals


class PoseInferencer:
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda:{}".format(args.gpu))
        cudnn.benchmark = True
        self.detector = build_detector(args.det).to(self.device).eval()
        self.pose = build_pose_model(args.pose).to(self.device).eval()
        if args.fp16:
            self.pose = self.pose.half()
        self.times = deque(maxlen=50)

    def preprocess(self, crops):
        arr = (np.stack(crops).astype(np.float32) - MEAN) / STD
        t = torch.from_numpy(arr).permute(0, 3, 1, 2).contiguous()
        t = t.pin_memory().to(self.device, non_blocking=True)
        return t.half() if self.args.fp16 else t

    @torch.no_grad()
    def detect(self, frame):
        img = torch.from_numpy(frame).permute(2, 0, 1).float().unsqueeze(0).to(self.device)
        with torch.cuda.amp.autocast(enabled=self.args.fp16):
            boxes, scores, labels = self.detector(img)
        keep = (labels == 0) & (scores > self.args.det_thr)
        boxes, scores = boxes[keep].float(), scores[keep].float()
        keep = torchvision.ops.nms(boxes, scores, 0.65)
        return boxes[keep].cpu().numpy()

    @torch.no_grad()
    def estimate(self, frame, boxes):
        if len(boxes) == 0:
            return np.zeros((0, 133, 2)), np.zeros((0, 133))
        centers, scales = bbox_xyxy2cs(boxes)
        crops, sizes = [], []
        for c, s in zip(centers, scales):
            crop, sz = top_down_affine(self.args.input_size, c, s, frame)
            crops.append(crop)
            sizes.append(sz)
        x = self.preprocess(crops)
        simcc_x, simcc_y = self.pose(x)
        locs, vals = decode_simcc(simcc_x.float(), simcc_y.float(), self.args.simcc_split)
        locs = locs.cpu().numpy()
        sizes = np.stack(sizes)
        locs = locs / np.array(self.args.input_size) * sizes[:, None] + centers[:, None] - sizes[:, None] / 2
        return locs, vals.cpu().numpy()

    def __call__(self, frame):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        boxes = self.detect(frame)
        kpts, scores = self.estimate(frame, boxes)
        end.record()
        torch.cuda.synchronize()
        self.times.append(start.elapsed_time(end))
        return boxes, kpts, scores

    @property
    def fps(self):
        return 1000.0 / (sum(self.times) / max(len(self.times), 1))


def draw(frame, kpts, scores, thr=0.3):
    for person, sc in zip(kpts, scores):
        for (x, y), s in zip(person, sc):
            if s > thr:
                cv2.circle(frame, (int(x), int(y)), 2, (0, 255, 0), -1)
    return frame


def main():
    args = parse_args()
    infer = PoseInferencer(args)
    cap = cv2.VideoCapture(args.video)
    fps = cap.get(cv2.CAP_PROP_FPS)
    w, h = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    writer = cv2.VideoWriter(args.out, cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    n = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        boxes, kpts, scores = infer(frame)
        writer.write(draw(frame, kpts, scores))
        n += 1
        if n % 100 == 0:
            print(f"frame {n}: {infer.fps:.1f} FPS, {torch.cuda.memory_allocated() / 2**20:.0f} MiB")
    writer.release()
    cap.release()


if __name__ == "__main__":
    main()
