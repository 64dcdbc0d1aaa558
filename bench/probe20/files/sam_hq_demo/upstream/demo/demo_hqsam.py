"""
HQ-SAM / EfficientSAM box- and point-prompted inference demo.

Runs the light HQ-SAM (ViT-tiny) or the full ViT-H model on a folder of images and writes
mask overlays. Uses bf16 autocast + TF32 on Ampere or newer GPUs.
"""
import argparse
import glob
import os
import time

import cv2
import matplotlib.pyplot as plt
import numpy as np
import torch

from segment_anything import SamPredictor, sam_model_registry


def show_mask(mask, ax, random_color=False):
    if random_color:
        color = np.concatenate([np.random.random(3), np.array([0.6])], axis=0)
    else:
        color = np.array([30 / 255, 144 / 255, 255 / 255, 0.6])
    h, w = mask.shape[-2:]
    mask_image = mask.reshape(h, w, 1) * color.reshape(1, 1, -1)
    ax.imshow(mask_image)


def show_box(box, ax):
    x0, y0 = box[0], box[1]
    w, h = box[2] - box[0], box[3] - box[1]
    ax.add_patch(plt.Rectangle((x0, y0), w, h, edgecolor='green', facecolor=(0, 0, 0, 0), lw=2))


def show_res(masks, scores, input_box, filename, image):
    for i, (mask, score) in enumerate(zip(masks, scores)):
        plt.figure(figsize=(10, 10))
        plt.imshow(image)
        show_mask(mask, plt.gca())
        if input_box is not None:
            show_box(input_box, plt.gca())
        print(f"Score: {score:.3f}")
        plt.axis('off')
        plt.savefig(filename + '_' + str(i) + '.png', bbox_inches="tight", pad_inches=-0.1)
        plt.close()


def parse_args():
    parser = argparse.ArgumentParser("HQ-SAM demo")
    parser.add_argument("--model-type", default="vit_h", choices=["vit_h", "vit_l", "vit_b", "vit_tiny"])
    parser.add_argument("--checkpoint", default="pretrained_checkpoint/sam_hq_vit_h.pth")
    parser.add_argument("--input", default="demo/input_imgs")
    parser.add_argument("--output", default="demo/hq_sam_result")
    parser.add_argument("--hq-token-only", action="store_true", help="use only the HQ output token")
    parser.add_argument("--bf16", action="store_true", help="run the image encoder under bf16 autocast (needs sm_80+)")
    return parser.parse_args()


def main():
    args = parse_args()
    device = "cuda"

    sam = sam_model_registry[args.model_type](checkpoint=args.checkpoint)
    sam.to(device=device)
    sam.eval()
    predictor = SamPredictor(sam)

    if args.bf16 and torch.cuda.get_device_properties(0).major >= 8:
        # turn on tfloat32 for Ampere GPUs (https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-devices)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        amp_ctx = torch.autocast("cuda", dtype=torch.bfloat16)
    else:
        amp_ctx = torch.autocast("cuda", enabled=False)

    os.makedirs(args.output, exist_ok=True)
    image_paths = sorted(glob.glob(os.path.join(args.input, "*.jpg")))
    boxes = np.load(os.path.join(args.input, "boxes.npy"), allow_pickle=True).item()

    total = 0.0
    for path in image_paths:
        name = os.path.splitext(os.path.basename(path))[0]
        image = cv2.imread(path)
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)

        torch.cuda.synchronize()
        t0 = time.time()
        with torch.inference_mode(), amp_ctx:
            predictor.set_image(image)
            input_box = np.array(boxes[name]) if name in boxes else None
            input_point, input_label = None, None
            if input_box is None:
                h, w = image.shape[:2]
                input_point = np.array([[w // 2, h // 2]])
                input_label = np.ones(1)
            masks, scores, logits = predictor.predict(
                point_coords=input_point,
                point_labels=input_label,
                box=input_box,
                multimask_output=False,
                hq_token_only=args.hq_token_only,
            )
        torch.cuda.synchronize()  # include mask decoding in the timing
        total += time.time() - t0

        show_res(masks, scores, input_box, os.path.join(args.output, name), image)

    if image_paths:
        print(f"avg latency: {1000 * total / len(image_paths):.1f} ms / image")
        print(f"peak memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
