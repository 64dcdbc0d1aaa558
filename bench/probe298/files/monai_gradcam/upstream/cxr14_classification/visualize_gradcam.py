# Copyright (c) MONAI Consortium
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

"""
Grad-CAM / Grad-CAM++ heatmaps for the DenseNet121 trained by train_densenet_fast.py.

    python visualize_gradcam.py --ckpt runs/densenet121_fast/best_metric_model.pth \
        --images /data/cxr14/images/00000013_005.png /data/cxr14/images/00000032_001.png \
        --classes Effusion Cardiomegaly --out_dir cams/
"""

import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

from monai.networks.nets import DenseNet121
from monai.transforms import Compose, EnsureChannelFirst, LoadImage, Resize, ScaleIntensity
from monai.visualize import GradCAM, GradCAMpp, OcclusionSensitivity

CLASSES = [
    "Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass", "Nodule", "Pneumonia",
    "Pneumothorax", "Consolidation", "Edema", "Emphysema", "Fibrosis", "Pleural_Thickening", "Hernia",
]


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--images", nargs="+", required=True)
    p.add_argument("--classes", nargs="+", default=None, help="class names to explain; default: top-1")
    p.add_argument("--method", choices=["gradcam", "gradcam++", "occlusion"], default="gradcam")
    p.add_argument("--image_size", type=int, default=256)
    p.add_argument("--out_dir", default="cams")
    return p.parse_args()


def load_model(ckpt):
    model = DenseNet121(spatial_dims=2, in_channels=1, out_channels=len(CLASSES)).to("cuda")
    # the checkpoint is a plain state_dict written by torch.save(model.state_dict(), ...) during training
    model.load_state_dict(torch.load(ckpt))
    model.eval()
    return model


def overlay(image, cam, title, path):
    fig, axes = plt.subplots(1, 2, figsize=(8, 4))
    axes[0].imshow(image, cmap="gray")
    axes[0].set_title("input")
    axes[1].imshow(image, cmap="gray")
    axes[1].imshow(cam, cmap="jet", alpha=0.4)
    axes[1].set_title(title)
    for ax in axes:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main():
    args = get_args()
    os.makedirs(args.out_dir, exist_ok=True)
    model = load_model(args.ckpt)

    preprocess = Compose([
        LoadImage(image_only=True),
        EnsureChannelFirst(),
        Resize((args.image_size, args.image_size)),
        ScaleIntensity(),
    ])

    if args.method == "gradcam":
        cam = GradCAM(nn_module=model, target_layers="class_layers.relu")
    elif args.method == "gradcam++":
        cam = GradCAMpp(nn_module=model, target_layers="class_layers.relu")
    else:
        cam = OcclusionSensitivity(nn_module=model, mask_size=16, n_batch=32, overlap=0.5)

    for path in args.images:
        img = preprocess(path)
        x = img.unsqueeze(0).to("cuda")

        with torch.no_grad():
            probs = torch.sigmoid(model(x))[0]

        if args.classes:
            class_ids = [CLASSES.index(c) for c in args.classes]
        else:
            class_ids = [int(probs.argmax())]

        for cid in class_ids:
            if args.method == "occlusion":
                occ_map, _ = cam(x)
                heat = occ_map[0, cid]
                heat = (heat.max() - heat)
            else:
                heat = cam(x=x, class_idx=cid)[0, 0]
            heat = heat.detach().cpu().numpy()
            heat = (heat - heat.min()) / (heat.max() - heat.min() + 1e-8)

            image_np = x[0, 0].cpu().numpy()
            name = os.path.splitext(os.path.basename(path))[0]
            out_path = os.path.join(args.out_dir, f"{name}_{CLASSES[cid]}_{args.method}.png")
            overlay(np.rot90(image_np, -1), np.rot90(heat, -1),
                    f"{CLASSES[cid]} p={probs[cid].item():.2f}", out_path)
            print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
