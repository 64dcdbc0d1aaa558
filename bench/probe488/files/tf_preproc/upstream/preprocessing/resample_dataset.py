"""Resample the ToothFairy CBCT volumes (and their dense / sparse annotations) to a common
spacing and store them as .npy for fast loading.

The original volumes are ~ 400x400x200 voxels at 0.3 mm; on the CPU scipy.ndimage.zoom takes
minutes per volume, so the heavy lifting is done on the GPU with CuPy.
"""
import argparse
import json
import os
from pathlib import Path

import numpy as np
import cupy as cp
from cupyx.scipy import ndimage as cndi
from tqdm import tqdm

TARGET_SPACING = (0.3, 0.3, 0.3)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True, help="ToothFairy dataset root (contains splits.json)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--spacing", type=float, nargs=3, default=TARGET_SPACING)
    p.add_argument("--gpu", type=int, default=0, help="CUDA device used by CuPy")
    p.add_argument("--clip", type=float, nargs=2, default=(0, 2100))
    return p.parse_args()


def read_spacing(patient_dir):
    meta = patient_dir / "spacing.json"
    if meta.exists():
        with open(meta) as f:
            return tuple(json.load(f)["spacing"])
    return TARGET_SPACING


def resample(volume, factors, order):
    vol_gpu = cp.asarray(volume)
    out = cndi.zoom(vol_gpu, factors, order=order, mode="nearest", grid_mode=False)
    return cp.asnumpy(out)


def normalize(volume, vmin, vmax):
    volume = np.clip(volume, vmin, vmax)
    return ((volume - vmin) / (vmax - vmin)).astype(np.float32)


def process_patient(patient_dir, out_dir, spacing, clip):
    src_spacing = read_spacing(patient_dir)
    factors = [s / t for s, t in zip(src_spacing, spacing)]

    data = np.load(patient_dir / "data.npy")
    data = resample(data.astype(np.float32), factors, order=3)
    data = normalize(data, *clip)

    out_patient = out_dir / patient_dir.name
    out_patient.mkdir(parents=True, exist_ok=True)
    np.save(out_patient / "data.npy", data)

    for name in ("gt_alpha.npy", "gt_sparse.npy"):
        f = patient_dir / name
        if not f.exists():
            continue
        lab = np.load(f).astype(np.uint8)
        # nearest neighbour for labels, otherwise the canal boundary gets new classes
        lab = resample(lab, factors, order=0)
        np.save(out_patient / name, lab.astype(np.uint8))

    # free the pool after every patient, the 0.3mm volumes do not fit twice in 11GB cards
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()
    return data.shape


def main():
    args = parse_args()
    cp.cuda.Device(args.gpu).use()
    root = Path(args.root)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    with open(root / "splits.json") as f:
        splits = json.load(f)

    shapes = {}
    patients = sorted({p for split in splits.values() for p in split})
    for pid in tqdm(patients, desc="resampling"):
        patient_dir = root / "Dataset" / pid
        if not patient_dir.exists():
            print(f"missing {patient_dir}, skipped")
            continue
        shapes[pid] = process_patient(patient_dir, out_dir / "Dataset", tuple(args.spacing), tuple(args.clip))

    with open(out_dir / "splits.json", "w") as f:
        json.dump(splits, f, indent=2)
    with open(out_dir / "shapes.json", "w") as f:
        json.dump({k: list(map(int, v)) for k, v in shapes.items()}, f, indent=2)
    print(f"resampled {len(shapes)} volumes to spacing {args.spacing}")


if __name__ == "__main__":
    main()
