"""Offline pseudo-label generation for self-training (CBST / CRST style).

Runs the adapted source model over the unlabeled target split, optionally with
multi-scale + flip test-time augmentation, computes class-balanced confidence
thresholds (the top ``--rho`` fraction of pixels per class) and writes one
uint8 PNG per image (255 = ignore) plus, optionally, the soft probabilities.

    python tools/generate_pseudo_labels.py --config-file configs/deeplabv2_r101_src.yaml \
        --checkpoint work_dirs/src_only/model_best.pth --out pseudo_labels/round0 --tta
"""
import argparse
import os
import os.path as osp
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader
from tqdm import tqdm

from core.configs import cfg
from core.datasets import build_dataset
from core.models import build_model
from core.utils.misc import mkdir, colorize


def parse_args():
    parser = argparse.ArgumentParser(description="Pseudo-label generation for self-training")
    parser.add_argument("--config-file", required=True, type=str)
    parser.add_argument("--checkpoint", required=True, type=str)
    parser.add_argument("--out", required=True, type=str)
    parser.add_argument("--gpu", default="0", type=str, help="GPU to run on (sets CUDA_VISIBLE_DEVICES)")
    parser.add_argument("--fp16", action="store_true", help="run inference under autocast")
    parser.add_argument("--tta", action="store_true", help="multi-scale + horizontal flip")
    parser.add_argument("--scales", default="0.75,1.0,1.25", type=str)
    parser.add_argument("--rho", default=0.2, type=float, help="class-balanced proportion (CBST)")
    parser.add_argument("--max-thresh", default=0.9, type=float)
    parser.add_argument("--save-prob", action="store_true")
    parser.add_argument("--batch-size", default=1, type=int)
    parser.add_argument("--workers", default=4, type=int)
    parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)
    return parser.parse_args()


def amp_dtype():
    """bf16 on Ampere and newer, fp16 otherwise."""
    major, _ = torch.cuda.get_device_capability()
    return torch.bfloat16 if major >= 8 else torch.float16


@torch.no_grad()
def multi_scale_inference(model, images, scales, flip=False, use_amp=False):
    _, _, h, w = images.shape
    prob_sum = None
    for s in scales:
        size = (int(h * s + 0.5), int(w * s + 0.5))
        x = F.interpolate(images, size=size, mode="bilinear", align_corners=True) if s != 1.0 else images
        with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype() if use_amp else torch.float16):
            logits = model(x)
            if flip:
                logits = logits + torch.flip(model(torch.flip(x, dims=[3])), dims=[3])
        logits = F.interpolate(logits.float(), size=(h, w), mode="bilinear", align_corners=True)
        prob = F.softmax(logits, dim=1)
        prob_sum = prob if prob_sum is None else prob_sum + prob
    return prob_sum / len(scales)


def class_balanced_thresholds(conf_per_class, rho, max_thresh):
    """CBST: per class, keep the `rho` most confident pixels (capped at max_thresh)."""
    thresholds = []
    for k, confs in enumerate(conf_per_class):
        if len(confs) == 0:
            thresholds.append(max_thresh)
            continue
        confs = np.concatenate(confs)
        confs.sort()
        idx = int(np.floor(len(confs) * (1.0 - rho)))
        idx = min(max(idx, 0), len(confs) - 1)
        thresholds.append(min(float(confs[idx]), max_thresh))
    return np.asarray(thresholds, dtype=np.float32)


def main():
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()

    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True

    model = build_model(cfg)
    checkpoint = torch.load(args.checkpoint, map_location="cuda:0")
    state = checkpoint["model"] if "model" in checkpoint else checkpoint
    state = {k.replace("module.", ""): v for k, v in state.items()}
    model.load_state_dict(state)
    model = model.to(device)
    model.eval()

    dataset = build_dataset(cfg, mode="train", is_source=False, return_name=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False,
                        num_workers=args.workers, pin_memory=True, drop_last=False)
    scales = [float(s) for s in args.scales.split(",")] if args.tta else [1.0]
    num_classes = cfg.MODEL.NUM_CLASSES

    mkdir(args.out)
    prob_dir = osp.join(args.out, "prob")
    if args.save_prob:
        mkdir(prob_dir)

    # ---- pass 1: predictions + per-class confidences ----
    conf_per_class = [[] for _ in range(num_classes)]
    cached = []
    tic = time.time()
    for batch in tqdm(loader, desc="predict"):
        images = batch["img"].to(device, non_blocking=True)
        names = batch["name"]
        prob = multi_scale_inference(model, images, scales, flip=args.tta, use_amp=args.fp16)
        conf, label = prob.max(dim=1)
        conf_np = conf.cpu().numpy()
        label_np = label.cpu().numpy().astype(np.uint8)
        for k in range(num_classes):
            sel = conf_np[label_np == k]
            if sel.size:
                # subsample to keep host memory bounded on 2975 Cityscapes images
                conf_per_class[k].append(sel[::16])
        for i, name in enumerate(names):
            cached.append((name, label_np[i], conf_np[i]))
            if args.save_prob:
                np.save(osp.join(prob_dir, osp.splitext(name)[0] + ".npy"),
                        prob[i].half().cpu().numpy())

    torch.cuda.synchronize()
    elapsed = time.time() - tic
    print(f"inference: {len(cached)} images in {elapsed:.1f}s "
          f"({len(cached) / max(elapsed, 1e-6):.2f} img/s), "
          f"peak memory {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")

    # ---- class-balanced thresholds ----
    thresholds = class_balanced_thresholds(conf_per_class, args.rho, args.max_thresh)
    np.save(osp.join(args.out, "thresholds.npy"), thresholds)
    for k, t in enumerate(thresholds):
        print(f"class {k:2d}: threshold {t:.3f}")

    # ---- pass 2: write pseudo-labels ----
    ignored = 0
    total = 0
    for name, label, conf in tqdm(cached, desc="write"):
        pseudo = label.copy()
        pseudo[conf < thresholds[label]] = 255
        ignored += int((pseudo == 255).sum())
        total += pseudo.size
        out_path = osp.join(args.out, osp.splitext(name)[0] + ".png")
        os.makedirs(osp.dirname(out_path), exist_ok=True)
        Image.fromarray(pseudo).save(out_path)
        colorize(pseudo).save(out_path.replace(".png", "_color.png"))

    print(f"pseudo-labels written to {args.out}; ignored {100.0 * ignored / max(total, 1):.1f}% of pixels")


if __name__ == "__main__":
    main()
