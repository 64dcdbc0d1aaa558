"""Extract COCO-17 keypoints from CASIA-B videos with SimpleHRNet + YOLOv3.

The output is one CSV file with one row per frame:
    image_name, subject, walk, seq, angle, x0, y0, c0, ..., x16, y16, c16
"""
import argparse
import csv
import os
import sys
import time

import cv2
import numpy as np
import torch
from tqdm import tqdm

sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pose_estimator", "simple_HRNet"))
from SimpleHRNet import SimpleHRNet  # noqa: E402

WALK_TYPES = {"nm": 0, "bg": 1, "cl": 2}


def parse_args():
    parser = argparse.ArgumentParser(description="Pose estimation on the CASIA-B videos")
    parser.add_argument("video_dir", help="Directory with the CASIA-B .avi files")
    parser.add_argument("output_csv", help="Where to write the keypoints")
    parser.add_argument("--hrnet_c", type=int, default=32)
    parser.add_argument("--hrnet_joints", type=int, default=17)
    parser.add_argument("--hrnet_weights", default="weights/pose_hrnet_w32_256x192.pth")
    parser.add_argument("--image_resolution", default="(256, 192)")
    parser.add_argument("--max_batch_size", type=int, default=16)
    parser.add_argument("--device", default="cuda",
                        help="device to be used (default: cuda, i.e. all visible GPUs). "
                             "Use 'cuda:IDS' to select specific GPUs, or 'cpu'")
    parser.add_argument("--disable_tracking", action="store_true")
    return parser.parse_args()


def parse_name(video_name):
    # e.g. 001-bg-01-090.avi
    subject, walk, seq, angle = os.path.splitext(video_name)[0].split("-")
    return int(subject), WALK_TYPES[walk], int(seq), int(angle)


def main(opt):
    device = torch.device(opt.device)
    if device.type == "cuda":
        torch.backends.cudnn.deterministic = False
        torch.backends.cudnn.benchmark = True

    model = SimpleHRNet(
        opt.hrnet_c,
        opt.hrnet_joints,
        opt.hrnet_weights,
        resolution=eval(opt.image_resolution),
        multiperson=True,
        max_batch_size=opt.max_batch_size,
        device=device,
    )

    videos = sorted(f for f in os.listdir(opt.video_dir) if f.endswith(".avi"))
    start = time.time()
    n_frames = 0
    with open(opt.output_csv, "w", newline="") as fp:
        writer = csv.writer(fp)
        header = ["image_name", "subject", "walk", "seq", "angle"]
        for j in range(opt.hrnet_joints):
            header += [f"x{j}", f"y{j}", f"c{j}"]
        writer.writerow(header)

        for video_name in tqdm(videos):
            subject, walk, seq, angle = parse_name(video_name)
            cap = cv2.VideoCapture(os.path.join(opt.video_dir, video_name))
            frame_idx = 0
            while True:
                ret, frame = cap.read()
                if not ret:
                    break
                pts = model.predict(frame)
                if len(pts) > 0:
                    # keep the most confident person only
                    best = int(np.argmax(pts[:, :, 2].mean(axis=1)))
                    person = pts[best]
                    row = [f"{os.path.splitext(video_name)[0]}/{frame_idx:03d}.jpg", subject, walk, seq, angle]
                    for y, x, c in person:
                        row += [f"{x:.2f}", f"{y:.2f}", f"{c:.4f}"]
                    writer.writerow(row)
                frame_idx += 1
                n_frames += 1
            cap.release()

    elapsed = time.time() - start
    print(f"Processed {n_frames} frames from {len(videos)} videos in {elapsed:.1f}s "
          f"({n_frames / max(elapsed, 1e-6):.1f} fps)")
    if device.type == "cuda":  # report peak memory
        print(f"Peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2 ** 20:.0f} MiB")


if __name__ == "__main__":
    main(parse_args())
