import os

import cv2
import numpy as np
import torch
from tqdm import tqdm

import face_alignment
from retinaface.pre_trained_models import get_model

from .utils import flatten, partition

detector = None
sfd_fa = None


def get_detector(max_size):
    global detector
    if detector is None:
        detector = get_model("resnet50_2020-07-20", max_size=max_size, device=torch.device("cuda:0"))
        detector.eval()
    return detector


def get_landmark_model():
    global sfd_fa
    if sfd_fa is None:
        sfd_fa = face_alignment.FaceAlignment(face_alignment.LandmarksType._2D, flip_input=False, device="cuda")
    return sfd_fa


def grab_all_frames(path, max_size, cvt=False):
    capture = cv2.VideoCapture(path)
    ret = True
    frames = []
    while ret and len(frames) < max_size:
        ret, frame = capture.read()
        if ret:
            if cvt:
                frame = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
            frames.append(frame)
    capture.release()
    return frames


def get_valid_faces(detect_results, max_count=10, thres=0.5, at_least=False):
    new_results = []
    for i, faces in enumerate(detect_results):
        if len(faces) > max_count:
            faces = faces[:max_count]
        l = []
        for j, face in enumerate(faces):
            if face[-1] < thres and not (j == 0 and at_least):
                continue
            box, lm, score = face
            box = box.astype(np.float64)
            lm = lm.astype(np.float64)
            l.append((box, lm, score))
        new_results.append(l)
    return new_results


def scale_box(box, scale):
    x1, y1, x2, y2 = box
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    w, h = (x2 - x1) * scale, (y2 - y1) * scale
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def detect_all(file, return_frames=False, max_size=None):
    frames = grab_all_frames(file, max_size=max_size, cvt=True)
    model = get_detector(max(frames[0].shape[:2]))
    fa = get_landmark_model()

    detect_res = []
    for frame in tqdm(frames, desc="retinaface"):
        annotations = model.predict_jsons(frame)
        faces = []
        for ann in annotations:
            if len(ann["bbox"]) == 0:
                continue
            box = np.array(ann["bbox"])
            lm5 = np.array(ann["landmarks"])
            faces.append((box, lm5, ann["score"]))
        detect_res.append(faces)

    detect_res = get_valid_faces(detect_res, thres=0.5)

    all_lm68 = []
    for frame, faces in tqdm(zip(frames, detect_res), total=len(frames), desc="fan-68"):
        if len(faces) == 0:
            all_lm68.append([])
            continue
        boxes = [scale_box(box, 1.0).tolist() + [score] for box, _, score in faces]
        lm68 = fa.get_landmarks_from_image(frame, detected_faces=boxes)
        if lm68 is None:
            lm68 = [np.zeros((68, 2)) for _ in faces]
        all_lm68.append([np.asarray(lm) for lm in lm68])

    print(f"detected {sum(len(f) for f in detect_res)} faces in {len(frames)} frames")
    if return_frames:
        return detect_res, all_lm68, frames
    return detect_res, all_lm68
