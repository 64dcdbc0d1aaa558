"""68-point landmark extraction used to build normalized face patches.

Two back-ends:
  * dlib (CPU, what the original ETH-XGaze demo uses)
  * face_alignment (FAN, much more robust on profile faces; GPU recommended)

    python tools/face_landmarks.py --images data/raw/subject0000 --out data/landmarks/subject0000.npz
"""
import argparse
import glob
import os
import sys

import cv2
import numpy as np
import torch
from tqdm import tqdm

try:
    import face_alignment
except ImportError:  # optional dependency
    face_alignment = None

try:
    import dlib
except ImportError:
    dlib = None


# indices of the 6 points used for solvePnP (eye corners + mouth corners)
PNP_INDICES = [36, 39, 42, 45, 48, 54]


class DlibLandmarker(object):
    def __init__(self, predictor_path='./modules/shape_predictor_68_face_landmarks.dat'):
        if dlib is None:
            raise ImportError('dlib is not installed')
        self.detector = dlib.get_frontal_face_detector()
        self.predictor = dlib.shape_predictor(predictor_path)

    def __call__(self, image_bgr):
        rgb = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2RGB)
        faces = self.detector(rgb, 1)
        if len(faces) == 0:
            return None
        shape = self.predictor(image_bgr, faces[0])
        return np.array([(p.x, p.y) for p in shape.parts()], dtype=np.float32)


class FANLandmarker(object):
    """Thin wrapper around face_alignment.FaceAlignment.

    face_alignment runs both its face detector (S3FD) and FAN on `device`.
    """

    def __init__(self, device='cuda', detector='sfd', flip_input=False):
        if face_alignment is None:
            raise ImportError('pip install face-alignment')
        if device == 'cuda' and not torch.cuda.is_available():
            print('[face_landmarks] CUDA not available, running FAN on CPU (slow)')
            device = 'cpu'
        self.device = device
        self.fa = face_alignment.FaceAlignment(face_alignment.LandmarksType._2D,
                                               flip_input=flip_input,
                                               device=device,
                                               face_detector=detector)

    def __call__(self, image_bgr):
        preds = self.fa.get_landmarks_from_image(image_bgr[:, :, ::-1])
        if preds is None or len(preds) == 0:
            return None
        # take the largest face
        areas = [np.ptp(p[:, 0]) * np.ptp(p[:, 1]) for p in preds]
        return preds[int(np.argmax(areas))].astype(np.float32)

    def batch(self, images_bgr):
        """Batched detection; only works when all frames have the same size."""
        stack = np.stack([im[:, :, ::-1] for im in images_bgr])
        tensor = torch.from_numpy(stack.copy()).permute(0, 3, 1, 2).float().to(self.device)
        preds = self.fa.get_landmarks_from_batch(tensor)
        return [p.astype(np.float32) if p is not None and len(p) else None for p in preds]


def build_landmarker(name, gpu):
    if name == 'dlib':
        return DlibLandmarker()
    device = 'cuda:%d' % gpu if gpu >= 0 else 'cpu'
    return FANLandmarker(device=device)


def quick_fan():
    """Used from notebooks: default FaceAlignment settings."""
    return face_alignment.FaceAlignment(face_alignment.LandmarksType._2D, flip_input=False)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--images', required=True, help='folder of frames (jpg/png)')
    p.add_argument('--out', required=True, help='output .npz')
    p.add_argument('--backend', default='fan', choices=['fan', 'dlib'])
    p.add_argument('--gpu', type=int, default=0, help='cuda device for FAN, -1 for cpu')
    p.add_argument('--batch', type=int, default=1, help='>1 uses batched FAN (same-size frames only)')
    return p.parse_args()


def main():
    args = parse_args()
    files = sorted(glob.glob(os.path.join(args.images, '*.jpg')) + glob.glob(os.path.join(args.images, '*.png')))
    if not files:
        print('no images found in', args.images)
        sys.exit(1)
    lm = build_landmarker(args.backend, args.gpu)

    names, landmarks, valid = [], [], []
    if args.batch > 1 and args.backend == 'fan':
        for i in tqdm(range(0, len(files), args.batch)):
            chunk = files[i:i + args.batch]
            imgs = [cv2.imread(f) for f in chunk]
            preds = lm.batch(imgs)
            for f, p in zip(chunk, preds):
                names.append(os.path.basename(f))
                valid.append(p is not None)
                landmarks.append(p if p is not None else np.zeros((68, 2), np.float32))
    else:
        for f in tqdm(files):
            img = cv2.imread(f)
            p = lm(img)
            names.append(os.path.basename(f))
            valid.append(p is not None)
            landmarks.append(p if p is not None else np.zeros((68, 2), np.float32))

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    np.savez_compressed(args.out, names=np.array(names), landmarks=np.stack(landmarks),
                        valid=np.array(valid), pnp_indices=np.array(PNP_INDICES))
    print('%d/%d frames with a face -> %s' % (int(np.sum(valid)), len(files), args.out))


if __name__ == '__main__':
    main()
