#!/usr/bin/env python
"""Batch inference for chest X-ray classifiers (PNG/JPEG/DICOM folders -> CSV).

    python tools/predict.py --weights output/densenet121/checkpoint-best.pth \
        --input /data/cxr/test_images --out predictions.csv --tta --half

Supports plain state_dict checkpoints written by train.py and TorchScript exports
(``--torchscript``). Test-time augmentation averages the image and its horizontal flip.
"""
import argparse
import glob
import os
import time

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

try:
    import pydicom
    from pydicom.pixel_data_handlers.util import apply_voi_lut
except ImportError:  # DICOM support is optional
    pydicom = None

import timm

TASKS = ['Atelectasis', 'Cardiomegaly', 'Consolidation', 'Edema', 'Pleural Effusion']
IMG_EXTS = ('.png', '.jpg', '.jpeg', '.dcm')


def read_dicom(path):
    ds = pydicom.dcmread(path)
    arr = apply_voi_lut(ds.pixel_array, ds).astype(np.float32)
    if getattr(ds, 'PhotometricInterpretation', '') == 'MONOCHROME1':
        arr = arr.max() - arr
    arr = (arr - arr.min()) / max(arr.max() - arr.min(), 1e-6)
    return Image.fromarray((arr * 255).astype(np.uint8))


class FolderDataset(Dataset):
    def __init__(self, root, img_size):
        self.paths = sorted(p for p in glob.glob(os.path.join(root, '**', '*'), recursive=True)
                            if p.lower().endswith(IMG_EXTS))
        if any(p.lower().endswith('.dcm') for p in self.paths) and pydicom is None:
            raise RuntimeError('DICOM files found but pydicom is not installed')
        self.tf = transforms.Compose([
            transforms.Resize((img_size, img_size)),
            transforms.ToTensor(),
            transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        ])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        p = self.paths[idx]
        img = read_dicom(p) if p.lower().endswith('.dcm') else Image.open(p)
        return self.tf(img.convert('RGB')), p


def load_model(args, device):
    if args.torchscript:
        model = torch.jit.load(args.weights, map_location=device)
    else:
        model = timm.create_model(args.model, pretrained=False, num_classes=len(TASKS))
        ckpt = torch.load(args.weights, map_location='cpu')
        state = ckpt.get('model_ema') if args.use_ema and 'model_ema' in ckpt else ckpt.get('model', ckpt)
        missing, unexpected = model.load_state_dict(state, strict=False)
        if missing or unexpected:
            print(f'warning: missing={len(missing)} unexpected={len(unexpected)} keys')
        model = model.to(device)
    model.eval()
    if args.half:
        model = model.half()
    return model


@torch.no_grad()
def predict(model, loader, device, args):
    paths, probs = [], []
    n_img, t_model = 0, 0.0
    for x, p in loader:
        x = x.to(device, non_blocking=True)
        if args.half:
            x = x.half()
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        logits = model(x)
        if args.tta:
            logits = (logits + model(torch.flip(x, dims=[3]))) / 2
        torch.cuda.synchronize()
        t_model += time.perf_counter() - t0
        probs.append(torch.sigmoid(logits.float()).cpu().numpy())
        paths.extend(p)
        n_img += x.shape[0]
    print(f'{n_img} images, model time {t_model:.1f}s ({n_img / max(t_model, 1e-9):.1f} img/s)')
    return paths, np.concatenate(probs)


def study_id_from_path(path):
    """CheXpert-style layout: .../patientXXXXX/studyN/viewK_frontal.jpg -> 'patientXXXXX/studyN'."""
    parts = os.path.normpath(path).split(os.sep)
    for i, part in enumerate(parts):
        if part.startswith('patient') and i + 1 < len(parts) and parts[i + 1].startswith('study'):
            return parts[i] + '/' + parts[i + 1]
    return os.path.splitext(os.path.basename(path))[0]


def aggregate_by_study(df, how='max'):
    """Combine frontal + lateral predictions of the same study (the CheXpert leaderboard scores studies)."""
    df = df.copy()
    df['Study'] = df['Path'].map(study_id_from_path)
    agg = {t: how for t in TASKS}
    out = df.groupby('Study', sort=True).agg(agg).reset_index()
    out['n_images'] = df.groupby('Study', sort=True).size().values
    return out


def evaluate_against(df, labels_csv):
    """If ground truth is available (valid.csv format), print per-task AUROC for the study-level predictions."""
    from sklearn.metrics import roc_auc_score
    gt = pd.read_csv(labels_csv)
    gt['Study'] = gt['Path'].map(study_id_from_path)
    gt = gt.groupby('Study').agg({t: 'max' for t in TASKS}).reset_index()
    merged = df.merge(gt, on='Study', suffixes=('', '_gt'))
    aucs = {}
    for t in TASKS:
        y = merged[t + '_gt'].fillna(0).clip(lower=0).values
        if len(np.unique(y)) < 2:
            continue
        aucs[t] = roc_auc_score(y, merged[t].values)
    for t, v in aucs.items():
        print(f'{t:>20s}: {v:.4f}')
    if aucs:
        print(f'{"mean":>20s}: {np.mean(list(aucs.values())):.4f}  ({len(merged)} studies)')
    return aucs


def main():
    parser = argparse.ArgumentParser(description='CXR batch inference')
    parser.add_argument('--weights', required=True)
    parser.add_argument('--model', default='densenet121')
    parser.add_argument('--torchscript', action='store_true')
    parser.add_argument('--use-ema', action='store_true')
    parser.add_argument('--input', required=True, help='folder with PNG/JPEG/DICOM files')
    parser.add_argument('--out', default='predictions.csv')
    parser.add_argument('--img-size', type=int, default=320)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--workers', type=int, default=8)
    parser.add_argument('--device', default='cuda:0')
    parser.add_argument('--half', action='store_true', help='fp16 inference (Volta or newer)')
    parser.add_argument('--tta', action='store_true')
    parser.add_argument('--threshold', type=float, default=None,
                        help='also write binary predictions using this threshold')
    parser.add_argument('--per-study', choices=['none', 'max', 'mean'], default='none',
                        help='aggregate image predictions per study')
    parser.add_argument('--labels', default=None, help='optional valid.csv with ground truth for AUROC')
    args = parser.parse_args()

    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    if args.half and torch.cuda.get_device_capability(device)[0] < 7:
        print('fp16 requested but this GPU has no tensor cores; falling back to fp32')
        args.half = False

    dataset = FolderDataset(args.input, args.img_size)
    print(f'found {len(dataset)} images under {args.input}')
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                        pin_memory=True, shuffle=False)

    model = load_model(args, device)
    paths, probs = predict(model, loader, device, args)

    df = pd.DataFrame(probs, columns=TASKS)
    df.insert(0, 'Path', paths)
    if args.threshold is not None:
        for t in TASKS:
            df[t + '_pred'] = (df[t] >= args.threshold).astype(int)
    if args.per_study != 'none':
        df = aggregate_by_study(df, how=args.per_study)
        if args.labels:
            evaluate_against(df, args.labels)
    df.to_csv(args.out, index=False)
    print(f'wrote {args.out}')

    torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
