"""Automatic number-plate recognition on a traffic video.

Pipeline per frame:
  1. COCO YOLOv5 detects vehicles (car / motorcycle / bus / truck)
  2. SORT assigns a track id to every vehicle
  3. a YOLOv5 model fine-tuned on licence plates finds plates
  4. each plate is assigned to the vehicle box that contains it
  5. EasyOCR reads the thresholded plate crop

Results are written to a CSV that visualize.py turns into an annotated video.
"""
import argparse
import os
import time

import cv2
import numpy as np
import torch

from sort.sort import Sort
from util import build_reader, get_car, read_license_plate, write_csv

DEVICE = 'cuda:0' if torch.cuda.is_available() else 'cpu'
torch.backends.cudnn.benchmark = True

VEHICLES = [2, 3, 5, 7]  # COCO ids: car, motorcycle, bus, truck


def parse_args():
    ap = argparse.ArgumentParser(description='YOLOv5 + SORT + EasyOCR licence plate reader')
    ap.add_argument('--video', default='./sample.mp4', help='input video')
    ap.add_argument('--plate-weights', default='./models/license_plate_detector.pt', help='plate detector weights')
    ap.add_argument('--output', default='./test.csv', help='where to write the per-frame results')
    ap.add_argument('--imgsz', type=int, default=640)
    ap.add_argument('--half', action='store_true', help='FP16 inference (GPU only)')
    ap.add_argument('--max-frames', type=int, default=-1)
    ap.add_argument('--log-mem', action='store_true', help='print GPU memory every 100 frames')
    return ap.parse_args()


def load_detectors(plate_weights, half=False):
    coco_model = torch.hub.load('ultralytics/yolov5', 'yolov5s', pretrained=True, verbose=False)
    plate_model = torch.hub.load('ultralytics/yolov5', 'custom', path=plate_weights, verbose=False)
    for m in (coco_model, plate_model):
        m.to(DEVICE)
        m.conf = 0.25
        m.iou = 0.45
        if half and DEVICE != 'cpu':
            m.half()
        m.eval()
    return coco_model, plate_model


def detect_vehicles(model, frame, imgsz):
    with torch.no_grad():
        det = model(frame[..., ::-1], size=imgsz).xyxy[0].cpu().numpy()
    return [d[:5].tolist() for d in det if int(d[5]) in VEHICLES]


def detect_plates(model, frame, imgsz):
    with torch.no_grad():
        return model(frame[..., ::-1], size=imgsz).xyxy[0].cpu().numpy()


def preprocess_plate(crop):
    gray = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    gray = cv2.bilateralFilter(gray, 11, 17, 17)
    _, thresh = cv2.threshold(gray, 64, 255, cv2.THRESH_BINARY_INV)
    return thresh


def main(args):
    coco_model, plate_model = load_detectors(args.plate_weights, args.half)
    # EasyOCR picks its own device from the flag
    reader = build_reader(gpu=DEVICE != 'cpu')
    mot_tracker = Sort()

    cap = cv2.VideoCapture(args.video)
    results = {}
    frame_nmr = -1
    t_start = time.time()
    ret = True
    while ret:
        frame_nmr += 1
        ret, frame = cap.read()
        if not ret or (0 < args.max_frames <= frame_nmr):
            break
        results[frame_nmr] = {}

        # detect + track vehicles
        detections_ = detect_vehicles(coco_model, frame, args.imgsz)
        if len(detections_):
            track_ids = mot_tracker.update(np.asarray(detections_))
        else:
            track_ids = mot_tracker.update(np.empty((0, 5)))

        # detect licence plates
        for license_plate in detect_plates(plate_model, frame, args.imgsz):
            x1, y1, x2, y2, score, class_id = license_plate

            # assign plate to car
            xcar1, ycar1, xcar2, ycar2, car_id = get_car(license_plate, track_ids)
            if car_id == -1:
                continue

            crop = frame[int(y1):int(y2), int(x1):int(x2), :]
            if crop.size == 0:
                continue
            thresh = preprocess_plate(crop)

            license_plate_text, license_plate_text_score = read_license_plate(reader, thresh)
            if license_plate_text is not None:
                results[frame_nmr][car_id] = {'car': {'bbox': [xcar1, ycar1, xcar2, ycar2]},
                                              'license_plate': {'bbox': [x1, y1, x2, y2],
                                                                'text': license_plate_text,
                                                                'bbox_score': score,
                                                                'text_score': license_plate_text_score}}

        if args.log_mem and frame_nmr % 100 == 0 and torch.cuda.is_available():
            print(f'frame {frame_nmr}: {torch.cuda.memory_allocated() / 2 ** 20:.0f} MiB allocated, '
                  f'{frame_nmr / (time.time() - t_start):.1f} fps')

    cap.release()
    write_csv(results, args.output)
    print(f'wrote {args.output} ({frame_nmr} frames, {time.time() - t_start:.1f}s)')


if __name__ == '__main__':
    main(parse_args())
