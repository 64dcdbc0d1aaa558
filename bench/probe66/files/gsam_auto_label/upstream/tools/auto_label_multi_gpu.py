"""Multi-GPU automatic annotation with Grounding DINO + SAM.

Splits an image folder across GPUs (one process per GPU), detects the given
categories with Grounding DINO, segments each box with SAM and writes one
COCO-style json per shard.

    python tools/auto_label_multi_gpu.py --images data/raw --classes "person,car,dog" \
        --gpus 0,1,2,3 --out data/pseudo
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn.functional as F
from PIL import Image
from pycocotools import mask as mask_utils
from torchvision.ops import batched_nms

from groundingdino.util.inference import load_model, predict, load_image
from groundingdino.util import box_ops
from segment_anything import SamPredictor, sam_model_registry


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--images", required=True)
    p.add_argument("--classes", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--gpus", default="0")
    p.add_argument("--gdino-config", default="GroundingDINO/groundingdino/config/GroundingDINO_SwinT_OGC.py")
    p.add_argument("--gdino-ckpt", default="weights/groundingdino_swint_ogc.pth")
    p.add_argument("--sam-type", default="vit_h")
    p.add_argument("--sam-ckpt", default="weights/sam_vit_h_4b8939.pth")
    p.add_argument("--box-thr", type=float, default=0.35)
    p.add_argument("--text-thr", type=float, default=0.25)
    p.add_argument("--nms-thr", type=float, default=0.7)
    p.add_argument("--half", action="store_true")
    p.add_argument("--profile", action="store_true")
    return p.parse_args()


def encode_rle(mask):
    rle = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    rle["counts"] = rle["counts"].decode("utf-8")
    return rle


def worker(rank, args, shards, gpu_ids):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[rank])
    torch.cuda.set_device(0)
    device = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = True

    gdino = load_model(args.gdino_config, args.gdino_ckpt, device="cuda")
    sam = sam_model_registry[args.sam_type](checkpoint=args.sam_ckpt).to(device)
    if args.half:
        sam = sam.half()
    predictor = SamPredictor(sam)

    classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    caption = " . ".join(classes) + " ."
    images, annotations = [], []
    ann_id = 1
    t0 = time.time()
    for img_id, path in enumerate(shards[rank]):
        image_source, image = load_image(path)
        h, w = image_source.shape[:2]
        if args.profile:
            torch.cuda.nvtx.range_push(f"gdino:{img_id}")
        boxes, logits, phrases = predict(
            model=gdino, image=image, caption=caption,
            box_threshold=args.box_thr, text_threshold=args.text_thr, device="cuda",
        )
        if args.profile:
            torch.cuda.nvtx.range_pop()
        images.append({"id": img_id, "file_name": os.path.basename(path), "height": h, "width": w})
        if boxes.numel() == 0:
            continue
        boxes_xyxy = box_ops.box_cxcywh_to_xyxy(boxes) * torch.tensor([w, h, w, h])
        labels = torch.tensor([classes.index(p) if p in classes else 0 for p in phrases])
        keep = batched_nms(boxes_xyxy, logits, labels, args.nms_thr)
        boxes_xyxy, logits, labels = boxes_xyxy[keep], logits[keep], labels[keep]

        predictor.set_image(image_source)
        tb = predictor.transform.apply_boxes_torch(boxes_xyxy, (h, w)).to(device)
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.half):
            masks, iou_preds, _ = predictor.predict_torch(
                point_coords=None, point_labels=None, boxes=tb, multimask_output=False
            )
        masks = masks[:, 0].cpu().numpy()
        for m, b, s, l, q in zip(masks, boxes_xyxy.tolist(), logits.tolist(), labels.tolist(), iou_preds[:, 0].tolist()):
            x0, y0, x1, y1 = b
            annotations.append({
                "id": ann_id, "image_id": img_id, "category_id": int(l) + 1,
                "bbox": [x0, y0, x1 - x0, y1 - y0], "area": float(m.sum()),
                "segmentation": encode_rle(m), "score": float(s), "mask_iou": float(q),
                "iscrowd": 0,
            })
            ann_id += 1
        if img_id % 50 == 0:
            torch.cuda.empty_cache()
            print(f"[gpu{gpu_ids[rank]}] {img_id}/{len(shards[rank])} "
                  f"{(time.time() - t0) / (img_id + 1):.2f}s/img "
                  f"mem={torch.cuda.memory_reserved() / 2**30:.1f}G", flush=True)

    out = {
        "images": images,
        "annotations": annotations,
        "categories": [{"id": i + 1, "name": c} for i, c in enumerate(classes)],
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"shard_{rank:02d}.json"), "w") as f:
        json.dump(out, f)


def main():
    args = parse_args()
    gpu_ids = [int(g) for g in args.gpus.split(",")]
    assert len(gpu_ids) <= torch.cuda.device_count(), "not enough GPUs"
    files = sorted(
        os.path.join(args.images, f) for f in os.listdir(args.images)
        if f.lower().endswith((".jpg", ".jpeg", ".png"))
    )
    shards = [files[i::len(gpu_ids)] for i in range(len(gpu_ids))]
    print(f"{len(files)} images over {len(gpu_ids)} GPUs")
    mp.spawn(worker, args=(args, shards, gpu_ids), nprocs=len(gpu_ids), join=True)


if __name__ == "__main__":
    main()
