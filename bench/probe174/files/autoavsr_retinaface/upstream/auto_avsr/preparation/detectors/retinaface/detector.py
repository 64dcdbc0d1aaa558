#! /usr/bin/env python
# -*- coding: utf-8 -*-

# Copyright 2021 Imperial College London (Pingchuan Ma)
# Apache 2.0  (http://www.apache.org/licenses/LICENSE-2.0)

import warnings

import numpy as np
import torch
import torchvision
from ibug.face_alignment import FANPredictor
from ibug.face_detection import RetinaFacePredictor

warnings.filterwarnings("ignore")


class LandmarksDetector:
    """RetinaFace (ibug.face_detection) + 2D-FAN (ibug.face_alignment) on a single GPU.

    Both predictors are plain PyTorch modules; ``device`` is forwarded to ``.to()`` and to
    ``torch.load(map_location=...)`` inside the ibug packages.
    """

    def __init__(self, device="cuda:0", model_name="resnet50", batch_size=16):
        self.device = device
        self.batch_size = batch_size
        self.face_detector = RetinaFacePredictor(
            device=device,
            threshold=0.8,
            model=RetinaFacePredictor.get_model(model_name),
        )
        self.landmark_detector = FANPredictor(device=device, model=None)
        if str(device).startswith("cuda"):
            torch.backends.cudnn.benchmark = True

    def __call__(self, video_frames):
        landmarks = []
        for frame in video_frames:
            detected_faces = self.face_detector(frame, rgb=False)
            face_points, _ = self.landmark_detector(frame, detected_faces, rgb=True)
            if len(detected_faces) == 0:
                landmarks.append(None)
            else:
                max_id, max_size = 0, 0
                for idx, bbox in enumerate(detected_faces):
                    bbox_size = (bbox[2] - bbox[0]) + (bbox[3] - bbox[1])
                    if bbox_size > max_size:
                        max_id, max_size = idx, bbox_size
                landmarks.append(face_points[max_id])
        return landmarks

    @torch.no_grad()
    def detect_boxes_batched(self, video_frames):
        """Batched RetinaFace forward, used by the fast path of the LRS3 preprocessing.

        Runs the raw detector network on stacks of frames and keeps the decoded boxes on
        the GPU until NMS, which is ~3x faster than the per-frame predictor on V100.
        """
        net = self.face_detector.net
        boxes_per_frame = []
        for start in range(0, len(video_frames), self.batch_size):
            chunk = np.stack(video_frames[start:start + self.batch_size]).astype(np.float32)
            chunk -= np.array([104.0, 117.0, 123.0], dtype=np.float32)  # BGR mean
            batch = torch.from_numpy(chunk).permute(0, 3, 1, 2).to("cuda", non_blocking=True)
            loc, conf, _ = net(batch)
            scores = conf[..., 1]
            for b in range(batch.size(0)):
                keep = scores[b] > 0.8
                cand = self.face_detector.decode(loc[b][keep], batch.shape[2:])
                kept = torchvision.ops.nms(cand, scores[b][keep], iou_threshold=0.4)
                boxes_per_frame.append(cand[kept].cpu().numpy())
        return boxes_per_frame
