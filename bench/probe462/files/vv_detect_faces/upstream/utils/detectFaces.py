#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#
# Detect faces in a video with MTCNN (facenet-pytorch), keep the most confident
# track and dump per-frame boxes so that mouth ROIs can be cropped afterwards.

import os
import argparse
import numpy as np
import cv2
import torch
from PIL import Image
from facenet_pytorch import MTCNN
from tqdm import tqdm

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
print('Running on device: {}'.format(device))


def parse_args():
    parser = argparse.ArgumentParser(description='face detection with MTCNN')
    parser.add_argument('--video_input_path', type=str, required=True)
    parser.add_argument('--output_path', type=str, required=True)
    parser.add_argument('--detect_every_N_frame', type=int, default=8)
    parser.add_argument('--scalar_face_detection', type=float, default=1.5)
    parser.add_argument('--number_of_speakers', type=int, default=2)
    parser.add_argument('--batch_size', type=int, default=32, help='frames per MTCNN call')
    return parser.parse_args()


def read_frames(video_path):
    cap = cv2.VideoCapture(video_path)
    frames = []
    while True:
        ret, frame = cap.read()
        if not ret:
            break
        frames.append(Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)))
    fps = cap.get(cv2.CAP_PROP_FPS)
    cap.release()
    return frames, fps


def expand_box(box, scalar, width, height):
    x1, y1, x2, y2 = box
    cx, cy = (x1 + x2) / 2.0, (y1 + y2) / 2.0
    half = max(x2 - x1, y2 - y1) * scalar / 2.0
    return [max(0, int(cx - half)), max(0, int(cy - half)),
            min(width, int(cx + half)), min(height, int(cy + half))]


def detect_faces(frames, mtcnn, args):
    landmarks = []
    boxes_all = []
    for i in tqdm(range(0, len(frames), args.detect_every_N_frame * args.batch_size)):
        batch = frames[i:i + args.detect_every_N_frame * args.batch_size:args.detect_every_N_frame]
        boxes, probs, points = mtcnn.detect(batch, landmarks=True)
        for b, p, l in zip(boxes, probs, points):
            if b is None:
                boxes_all.append(None)
                landmarks.append(None)
                continue
            order = np.argsort(-p)[:args.number_of_speakers]
            boxes_all.append(b[order])
            landmarks.append(l[order])
    return boxes_all, landmarks


def interpolate_boxes(boxes, n_frames, step):
    # boxes were detected every `step` frames; fill the gaps by holding the last box
    out = []
    last = None
    for idx in range(n_frames):
        det = boxes[idx // step] if idx // step < len(boxes) else None
        if det is not None:
            last = det
        out.append(last)
    return out


def main():
    args = parse_args()
    os.makedirs(args.output_path, exist_ok=True)
    mtcnn = MTCNN(keep_all=True, device=device)

    frames, fps = read_frames(args.video_input_path)
    print('%d frames at %.2f fps' % (len(frames), fps))
    width, height = frames[0].size

    boxes, landmarks = detect_faces(frames, mtcnn, args)
    boxes = interpolate_boxes(boxes, len(frames), args.detect_every_N_frame)

    for speaker in range(args.number_of_speakers):
        speaker_boxes = []
        for b in boxes:
            if b is None or len(b) <= speaker:
                speaker_boxes.append([0, 0, width, height])
            else:
                speaker_boxes.append(expand_box(b[speaker], args.scalar_face_detection, width, height))
        np.save(os.path.join(args.output_path, 'speaker%d_boxes.npy' % (speaker + 1)), np.array(speaker_boxes))

    first_landmarks = [l for l in landmarks if l is not None]
    if first_landmarks:
        np.save(os.path.join(args.output_path, 'landmarks.npy'), np.stack(first_landmarks[:1]))
    print('face detection done, results in %s' % args.output_path)


if __name__ == '__main__':
    main()
