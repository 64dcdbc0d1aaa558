"""Generate soft pseudo-labels for the NIH ChestX-ray14 external images with the RANZCR
5-fold teacher ensemble (noisy-student round N -> N+1).

One worker process per GPU, each takes a contiguous shard of the unlabelled csv:
    python tools/make_pseudo_labels.py --teachers outputs/round1 --round 2 --tta 2
"""
import argparse
import glob
import os

import cv2
import numpy as np
import pandas as pd
import timm
import torch
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

TARGETS = [
    "ETT - Abnormal", "ETT - Borderline", "ETT - Normal",
    "NGT - Abnormal", "NGT - Borderline", "NGT - Incompletely Imaged", "NGT - Normal",
    "CVC - Abnormal", "CVC - Borderline", "CVC - Normal", "Swan Ganz Catheter Present",
]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--csv", default="../input/nih-chest-xrays/unlabelled.csv")
    p.add_argument("--image-dir", default="../input/nih-chest-xrays/images_512")
    p.add_argument("--teachers", required=True, help="dir with fold*/best.pth")
    p.add_argument("--arch", default="tf_efficientnet_b7_ns")
    p.add_argument("--size", type=int, default=640)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--tta", type=int, default=2)
    p.add_argument("--temperature", type=float, default=0.5, help="<1 sharpens the soft labels")
    p.add_argument("--min-conf", type=float, default=0.0)
    p.add_argument("--round", type=int, default=1)
    p.add_argument("--out", default="pseudo")
    p.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    return p.parse_args()


class UnlabelledDataset(Dataset):
    def __init__(self, df, image_dir, size):
        self.paths = [os.path.join(image_dir, f) for f in df["Image Index"].values]
        self.size = size

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = cv2.imread(self.paths[i], cv2.IMREAD_GRAYSCALE)
        img = cv2.resize(img, (self.size, self.size), interpolation=cv2.INTER_AREA)
        img = img.astype(np.float32) / 255.0
        img = (img - 0.5) / 0.25
        return torch.from_numpy(img[None].repeat(3, 0))


class RanzcrNet(nn.Module):
    def __init__(self, arch, n_classes=len(TARGETS)):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, global_pool="")
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(self.backbone.num_features, n_classes)

    def forward(self, x):
        f = self.pool(self.backbone(x)).flatten(1)
        return self.fc(f)


def load_teachers(args, device):
    paths = sorted(glob.glob(os.path.join(args.teachers, "fold*", "best.pth")))
    assert paths, f"no teacher checkpoints in {args.teachers}"
    teachers = []
    for path in paths:
        model = RanzcrNet(args.arch)
        state = torch.load(path, map_location=device)
        state = {k.replace("module.", ""): v for k, v in state.items()}
        model.load_state_dict(state)
        teachers.append(model.to(device).eval())
    return teachers


@torch.no_grad()
def predict(teachers, loader, device, tta):
    out = []
    for images in tqdm(loader, leave=False):
        images = images.to(device, non_blocking=True)
        logits = 0
        with torch.cuda.amp.autocast(dtype=torch.float16):
            for m in teachers:
                logits = logits + m(images).float()
                if tta > 1:
                    logits = logits + m(images.flip(-1)).float()
        logits = logits / (len(teachers) * tta)
        out.append(logits.cpu())
    return torch.cat(out)


def worker(rank, args, shards):
    device = torch.device(f"cuda:{rank}")
    torch.cuda.set_device(device)
    df = shards[rank]
    ds = UnlabelledDataset(df, args.image_dir, args.size)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=False, num_workers=4, pin_memory=True)
    teachers = load_teachers(args, device)
    logits = predict(teachers, loader, device, args.tta)
    probs = torch.sigmoid(logits / args.temperature).numpy()
    res = df[["Image Index"]].copy()
    res[TARGETS] = probs
    res.to_csv(os.path.join(args.out, f"shard{rank}.csv"), index=False)


def balance_by_class(df, max_per_class=4000, thr=0.5, seed=0):
    """Cap the number of confident positives per target so frequent classes do not dominate."""
    rng = np.random.RandomState(seed)
    keep = np.zeros(len(df), dtype=bool)
    for t in TARGETS:
        pos = np.where(df[t].values >= thr)[0]
        if len(pos) > max_per_class:
            pos = rng.choice(pos, max_per_class, replace=False)
        keep[pos] = True
    # keep all confident all-negative images too (they teach the "normal" pattern)
    neg = (df[TARGETS].values < 1 - thr).all(1)
    keep |= neg
    return df[keep].reset_index(drop=True)


def merge(args, n):
    parts = [pd.read_csv(os.path.join(args.out, f"shard{i}.csv")) for i in range(n)]
    df = pd.concat(parts).reset_index(drop=True)
    conf = df[TARGETS].values
    conf = np.maximum(conf, 1 - conf).mean(1)
    df["confidence"] = conf
    keep = df[df.confidence >= args.min_conf].reset_index(drop=True)
    out = os.path.join(args.out, f"pseudo_round{args.round}.csv")
    keep.to_csv(out, index=False)
    print(f"kept {len(keep)}/{len(df)} pseudo-labelled images -> {out}")


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    df = pd.read_csv(args.csv)
    n = max(args.gpus, 1)
    shards = np.array_split(df, n)
    if n == 1:
        worker(0, args, shards)
    else:
        mp.spawn(worker, args=(args, shards), nprocs=n, join=True)
    merge(args, n)


if __name__ == "__main__":
    main()
