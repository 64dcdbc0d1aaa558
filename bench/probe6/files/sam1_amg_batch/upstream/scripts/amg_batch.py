"""Batched automatic mask generation with Segment Anything (v1) over a folder of images.

Embeds several images per forward pass, then prompts the mask decoder with a point grid.
"""
import argparse
import json
import os
from typing import Any, Dict, List

import cv2
import numpy as np
import torch
from pycocotools import mask as mask_utils
from tqdm import tqdm

from segment_anything import SamAutomaticMaskGenerator, SamPredictor, sam_model_registry
from segment_anything.utils.amg import build_all_layer_point_grids, batched_mask_to_box, calculate_stability_score
from segment_anything.utils.transforms import ResizeLongestSide

parser = argparse.ArgumentParser(description="Runs automatic mask generation on a folder of images.")
parser.add_argument("--input", type=str, required=True)
parser.add_argument("--output", type=str, required=True)
parser.add_argument("--model-type", type=str, default="vit_h")
parser.add_argument("--checkpoint", type=str, required=True)
parser.add_argument("--device", type=str, default="cuda", help="The device to run generation on.")
parser.add_argument("--batch-size", type=int, default=4)
parser.add_argument("--points-per-side", type=int, default=32)
parser.add_argument("--points-per-batch", type=int, default=64)
parser.add_argument("--pred-iou-thresh", type=float, default=0.88)
parser.add_argument("--stability-score-thresh", type=float, default=0.95)
parser.add_argument("--bf16", action="store_true", help="Run the image encoder in bfloat16 autocast.")


def load_images(paths: List[str], transform: ResizeLongestSide, device) -> torch.Tensor:
    batch = []
    for p in paths:
        image = cv2.cvtColor(cv2.imread(p), cv2.COLOR_BGR2RGB)
        image = transform.apply_image(image)
        batch.append(torch.as_tensor(image, device=device).permute(2, 0, 1).contiguous())
    return batch


def rle(mask: np.ndarray) -> Dict[str, Any]:
    enc = mask_utils.encode(np.asfortranarray(mask))
    enc["counts"] = enc["counts"].decode("utf-8")
    return enc


@torch.no_grad()
def embed_batch(sam, images: List[torch.Tensor], use_bf16: bool):
    x = torch.stack([sam.preprocess(im[None])[0] for im in images])
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=use_bf16):
        feats = sam.image_encoder(x)
    return feats.float()


@torch.no_grad()
def decode_points(sam, feats, points, orig_size, input_size, args):
    transform = ResizeLongestSide(sam.image_encoder.img_size)
    out = []
    for start in range(0, len(points), args.points_per_batch):
        pts = points[start:start + args.points_per_batch]
        coords = transform.apply_coords(pts, orig_size)
        in_points = torch.as_tensor(coords, device=feats.device)[:, None, :]
        in_labels = torch.ones(in_points.shape[:2], dtype=torch.int, device=feats.device)
        sparse, dense = sam.prompt_encoder(points=(in_points, in_labels), boxes=None, masks=None)
        low_res, iou = sam.mask_decoder(image_embeddings=feats[None], image_pe=sam.prompt_encoder.get_dense_pe(),
                                        sparse_prompt_embeddings=sparse, dense_prompt_embeddings=dense,
                                        multimask_output=True)
        masks = sam.postprocess_masks(low_res, input_size, orig_size).flatten(0, 1)
        iou = iou.flatten(0, 1)
        keep = iou > args.pred_iou_thresh
        masks, iou = masks[keep], iou[keep]
        stab = calculate_stability_score(masks, sam.mask_threshold, 1.0)
        keep = stab >= args.stability_score_thresh
        masks, iou = masks[keep] > sam.mask_threshold, iou[keep]
        out.append((masks.cpu(), iou.cpu(), batched_mask_to_box(masks).cpu()))
    return out


def main(args):
    print("Loading model...")
    sam = sam_model_registry[args.model_type](checkpoint=args.checkpoint)
    _ = sam.to(device=args.device)
    sam.eval()
    if torch.cuda.get_device_properties(0).major >= 8:
        # turn on tfloat32 for Ampere GPUs
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    use_bf16 = args.bf16 and torch.cuda.is_bf16_supported()

    transform = ResizeLongestSide(sam.image_encoder.img_size)
    grid = build_all_layer_point_grids(args.points_per_side, 0, 1)[0]
    targets = sorted(f for f in os.listdir(args.input) if not os.path.isdir(os.path.join(args.input, f)))
    os.makedirs(args.output, exist_ok=True)

    for i in tqdm(range(0, len(targets), args.batch_size)):
        names = targets[i:i + args.batch_size]
        paths = [os.path.join(args.input, n) for n in names]
        originals = [cv2.imread(p).shape[:2] for p in paths]
        images = load_images(paths, transform, args.device)
        feats = embed_batch(sam, images, use_bf16)
        for name, f, orig, im in zip(names, feats, originals, images):
            points = grid * np.array(orig)[None, ::-1]
            results = decode_points(sam, f, points, orig, tuple(im.shape[-2:]), args)
            anns = []
            for masks, iou, boxes in results:
                for m, s, b in zip(masks.numpy(), iou.tolist(), boxes.tolist()):
                    anns.append({"segmentation": rle(m), "predicted_iou": s, "bbox": b, "area": int(m.sum())})
            with open(os.path.join(args.output, os.path.splitext(name)[0] + ".json"), "w") as fh:
                json.dump(anns, fh)
        if i % (args.batch_size * 50) == 0:
            torch.cuda.empty_cache()
    print("Done!")


if __name__ == "__main__":
    args = parser.parse_args()
    main(args)
