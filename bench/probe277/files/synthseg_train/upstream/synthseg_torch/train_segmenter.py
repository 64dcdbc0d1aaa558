"""Train a contrast-agnostic 3D U-Net segmenter on synthetic brains only.

    python train_segmenter.py --labels_dir data/training_label_maps \
        --model_dir models/synthseg_unet --steps_per_epoch 5000 --epochs 100 --amp

Images are generated on the fly by ``generation.BrainGenerator`` (on the GPU);
validation uses real scans (T1/T2/FLAIR from the ADNI / HCP subsets listed in
``data/val_list.csv``).
"""
import argparse
import csv
import json
import os
import time

import nibabel as nib
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from generation.brain_generator import BrainGenerator
from models.unet3d import UNet3D

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--labels_dir", required=True)
    p.add_argument("--model_dir", required=True)
    p.add_argument("--val_csv", default="data/val_list.csv")
    p.add_argument("--segmentation_labels", default="data/labels_classes_priors/segmentation_labels.npy")
    p.add_argument("--target_shape", type=int, nargs=3, default=[160, 160, 160])
    p.add_argument("--batch_size", type=int, default=1)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--steps_per_epoch", type=int, default=5000)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--n_levels", type=int, default=5)
    p.add_argument("--unet_feat_count", type=int, default=24)
    p.add_argument("--feat_multiplier", type=int, default=2)
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16) training")
    p.add_argument("--fused_adam", action="store_true", help="use apex FusedAdam if available")
    p.add_argument("--checkpoint", default=None)
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


class SoftDiceLoss(nn.Module):
    """1 - mean soft Dice over foreground classes (background excluded)."""

    def __init__(self, n_classes, eps=1e-5):
        super().__init__()
        self.n_classes = n_classes
        self.eps = eps

    def forward(self, logits, target):
        probs = torch.softmax(logits.float(), dim=1)
        onehot = F.one_hot(target.squeeze(1), self.n_classes).permute(0, 4, 1, 2, 3).float()
        dims = (0, 2, 3, 4)
        inter = torch.sum(probs * onehot, dims)
        denom = torch.sum(probs, dims) + torch.sum(onehot, dims)
        dice = (2 * inter + self.eps) / (denom + self.eps)
        return 1 - dice[1:].mean()


def load_val_set(csv_path, seg_labels, shape):
    """Real validation scans, conformed to 1mm and cropped to the training shape."""
    items = []
    if not os.path.exists(csv_path):
        return items
    lut = {int(l): i for i, l in enumerate(seg_labels)}
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            img = nib.load(row["image"]).get_fdata().astype(np.float32)
            lab = nib.load(row["label"]).get_fdata().astype(np.int32)
            lab = np.vectorize(lambda v: lut.get(int(v), 0))(lab)
            img = (img - img.min()) / (img.max() - img.min() + 1e-6)
            sl = tuple(slice((s - t) // 2, (s - t) // 2 + t) for s, t in zip(img.shape, shape))
            items.append((row["contrast"], torch.from_numpy(img[sl][None, None].copy()),
                          torch.from_numpy(lab[sl][None, None].copy()).long()))
    return items


@torch.no_grad()
def validate(model, val_set, n_classes, device):
    model.eval()
    scores = {}
    for contrast, img, lab in val_set:
        img = img.to(device)
        lab = lab.to(device)
        pred = model(img).argmax(1, keepdim=True)
        d = []
        for c in range(1, n_classes):
            p, t = pred == c, lab == c
            denom = p.sum() + t.sum()
            if denom > 0:
                d.append((2.0 * (p & t).sum() / denom).item())
        scores.setdefault(contrast, []).append(float(np.mean(d)) if d else 0.0)
    model.train()
    return {k: float(np.mean(v)) for k, v in scores.items()}


def main():
    args = parse_args()
    os.makedirs(args.model_dir, exist_ok=True)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda", args.gpu)
    torch.backends.cudnn.benchmark = True

    seg_labels = np.load(args.segmentation_labels)
    n_classes = len(np.unique(seg_labels))
    output_labels = np.searchsorted(np.unique(seg_labels), seg_labels)

    generator = BrainGenerator(args.labels_dir,
                               generation_labels=seg_labels,
                               output_labels=output_labels,
                               target_shape=args.target_shape,
                               device=device)

    model = UNet3D(in_channels=1,
                   n_classes=n_classes,
                   n_levels=args.n_levels,
                   feat_count=args.unet_feat_count,
                   feat_mult=args.feat_multiplier).to(device)

    if args.fused_adam and HAS_APEX:
        optimizer = FusedAdam(model.parameters(), lr=args.lr)
        print("using apex FusedAdam")
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    dice_loss = SoftDiceLoss(n_classes)

    start_epoch = 0
    if args.checkpoint is not None:
        ckpt = torch.load(args.checkpoint, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch = ckpt["epoch"]

    val_set = load_val_set(args.val_csv, seg_labels, args.target_shape)
    history = []
    for epoch in range(start_epoch, args.epochs):
        torch.cuda.reset_peak_memory_stats(device)
        t0 = time.time()
        running = 0.0
        for step in range(args.steps_per_epoch):
            img, seg = generator.generate_batch(args.batch_size)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):
                logits = model(img)
                loss = dice_loss(logits, seg)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            running += loss.item()
            if (step + 1) % 500 == 0:
                print(f"epoch {epoch} step {step + 1}/{args.steps_per_epoch} "
                      f"dice_loss {running / (step + 1):.4f} "
                      f"{(time.time() - t0) / (step + 1):.3f}s/step")

        val = validate(model, val_set, n_classes, device) if val_set else {}
        peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
        print(f"== epoch {epoch}: loss {running / args.steps_per_epoch:.4f} val {val} "
              f"peak GPU mem {peak:.1f} GiB, {time.time() - t0:.0f}s")
        history.append({"epoch": epoch, "loss": running / args.steps_per_epoch, "val": val})

        torch.save({"model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scaler": scaler.state_dict(),
                    "epoch": epoch + 1},
                   os.path.join(args.model_dir, f"epoch_{epoch + 1:03d}.pth"))
        with open(os.path.join(args.model_dir, "history.json"), "w") as f:
            json.dump(history, f, indent=1)


if __name__ == "__main__":
    main()
