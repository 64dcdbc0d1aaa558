# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

"""Detect 68-point facial landmarks for every frame of LRS3 / VoxCeleb2 videos.

Two backends are supported:
  * ``dlib``  - HOG / CNN (mmod) face detector + 68-point shape predictor (CPU, or CUDA if dlib
                was compiled with DLIB_USE_CUDA)
  * ``fan``   - S3FD detector + 2D-FAN from the ``face_alignment`` package (runs in PyTorch on GPU)

The output is one pickle per video containing a list of (68, 2) arrays (None where no face was found),
consumed later by ``align_mouth.py``.
"""

import argparse
import glob
import math
import os
import pickle
import shutil
import sys
import time

import cv2
import numpy as np
import torch
from tqdm import tqdm


def load_args(default_config=None):
    parser = argparse.ArgumentParser(description='detecting facial landmarks', formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--root', type=str, help='root dir')
    parser.add_argument('--landmark', type=str, help='landmark dir')
    parser.add_argument('--manifest', type=str, help='a list of filenames')
    parser.add_argument('--cnn_detector', type=str, help='path to cnn detector (download and unzip from: http://dlib.net/files/mmod_human_face_detector.dat.bz2)')
    parser.add_argument('--face_predictor', type=str, help='path to face predictor (download and unzip from: http://dlib.net/files/shape_predictor_68_face_landmarks.dat.bz2)')
    parser.add_argument('--backend', type=str, default='dlib', choices=['dlib', 'fan'], help='landmark backend')
    parser.add_argument('--batch-size', type=int, default=32, help='frames per forward pass (fan backend)')
    parser.add_argument('--gpu', type=int, default=0, help='GPU index for the fan backend')
    parser.add_argument('--ffmpeg', type=str, help='ffmpeg path')
    parser.add_argument('--rank', type=int, help='rank id')
    parser.add_argument('--nshard', type=int, help='number of shards')
    args = parser.parse_args()
    return args


def read_video(filename):
    cap = cv2.VideoCapture(filename)
    while (cap.isOpened()):
        ret, frame = cap.read()  # BGR
        if ret:
            yield frame
        else:
            break
    cap.release()


class DlibLandmarker(object):
    """CPU landmarker: frontal HOG detector with a CNN (mmod) fallback."""

    def __init__(self, cnn_detector_path, face_predictor_path):
        import dlib
        if dlib.DLIB_USE_CUDA:
            print(f"dlib compiled with CUDA, {dlib.cuda.get_num_devices()} device(s) visible")
        self.detector = dlib.get_frontal_face_detector()
        self.cnn_detector = dlib.cnn_face_detection_model_v1(cnn_detector_path)
        self.predictor = dlib.shape_predictor(face_predictor_path)

    def detect(self, frame):
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        rects = self.detector(gray, 1)
        if len(rects) == 0:
            rects = self.cnn_detector(gray)
            rects = [d.rect for d in rects]
        coords = None
        for (_, rect) in enumerate(rects):
            shape = self.predictor(gray, rect)
            coords = np.zeros((68, 2), dtype=np.int32)
            for i in range(0, 68):
                coords[i] = (shape.part(i).x, shape.part(i).y)
        return coords


class FANLandmarker(object):
    """GPU landmarker based on face_alignment (S3FD + 2D-FAN)."""

    def __init__(self, gpu=0, batch_size=32):
        import face_alignment
        if not torch.cuda.is_available():
            raise RuntimeError("the fan backend needs a CUDA GPU; use --backend dlib on CPU machines")
        torch.cuda.set_device(gpu)
        torch.backends.cudnn.benchmark = True
        self.batch_size = batch_size
        self.fa = face_alignment.FaceAlignment(
            face_alignment.LandmarksType._2D,
            flip_input=False,
            device='cuda',
            face_detector='sfd',
        )

    @torch.no_grad()
    def detect_batch(self, frames):
        # face_alignment expects RGB, (B, C, H, W) uint8-valued float tensors
        rgb = [cv2.cvtColor(f, cv2.COLOR_BGR2RGB) for f in frames]
        batch = torch.from_numpy(np.stack(rgb)).permute(0, 3, 1, 2).float()
        batch = batch.cuda(non_blocking=True)
        preds = self.fa.get_landmarks_from_batch(batch)
        out = []
        for p in preds:
            if p is None or len(p) == 0:
                out.append(None)
            else:
                out.append(np.asarray(p[:68], dtype=np.int32).reshape(68, 2))
        return out


def detect_face_landmarks(landmarker, input_dir, output_dir, fids, backend, batch_size):
    for fid in tqdm(fids):
        output_fn = os.path.join(output_dir, fid + '.pkl')
        video_path = os.path.join(input_dir, fid + '.mp4')
        if os.path.isfile(output_fn):
            continue
        frames = list(read_video(video_path))
        if backend == 'dlib':
            landmarks = [landmarker.detect(frame) for frame in frames]
        else:
            landmarks = []
            for start in range(0, len(frames), batch_size):
                landmarks.extend(landmarker.detect_batch(frames[start:start + batch_size]))
        os.makedirs(os.path.dirname(output_fn), exist_ok=True)
        pickle.dump(landmarks, open(output_fn, 'wb'))
    return


def log_gpu_memory(tag):
    if torch.cuda.is_available():
        used = torch.cuda.memory_allocated() / 2 ** 30
        peak = torch.cuda.max_memory_allocated() / 2 ** 30
        print(f"[{tag}] gpu memory: {used:.2f} GiB in use, {peak:.2f} GiB peak")


if __name__ == '__main__':
    args = load_args()
    input_dir = args.root
    output_dir = args.landmark
    fids = [ln.strip() for ln in open(args.manifest).readlines()]
    num_per_shard = math.ceil(len(fids) / args.nshard)
    start_id, end_id = num_per_shard * args.rank, num_per_shard * (args.rank + 1)
    fids = fids[start_id: end_id]
    print(f"{len(fids)} files")
    t0 = time.time()
    if args.backend == 'dlib':
        landmarker = DlibLandmarker(args.cnn_detector, args.face_predictor)
    else:
        landmarker = FANLandmarker(gpu=args.gpu, batch_size=args.batch_size)
    detect_face_landmarks(landmarker, input_dir, output_dir, fids, args.backend, args.batch_size)
    if args.backend == 'fan':
        log_gpu_memory('done')
    print(f"shard {args.rank}/{args.nshard} finished in {time.time() - t0:.1f}s")
