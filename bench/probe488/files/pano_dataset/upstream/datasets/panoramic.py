"""Panoramic radiograph dataset with per-tooth polygons labelled by FDI number.

Layout::

    data/pano/
        images/{train,val,test}/*.png
        annotations/{train,val,test}.json   # COCO style, category_id = FDI index (1..32)
"""
import json
import os

import numpy as np
import torch
from PIL import Image
from pycocotools import mask as coco_mask

# 32 permanent teeth, FDI 11..18, 21..28, 31..38, 41..48  (+ background)
FDI_CODES = [q * 10 + t for q in (1, 2, 3, 4) for t in range(1, 9)]
NUM_CLASSES = len(FDI_CODES) + 1
FDI_TO_LABEL = {fdi: i + 1 for i, fdi in enumerate(FDI_CODES)}
LABEL_TO_FDI = {v: k for k, v in FDI_TO_LABEL.items()}


def mirror_fdi(fdi):
    """FDI number of the contralateral tooth (used by the horizontal flip augmentation)."""
    quadrant, tooth = divmod(fdi, 10)
    mirrored = {1: 2, 2: 1, 3: 4, 4: 3}[quadrant]
    return mirrored * 10 + tooth


def polygons_to_mask(polygons, height, width):
    rles = coco_mask.frPyObjects(polygons, height, width)
    mask = coco_mask.decode(rles)
    if mask.ndim == 3:
        mask = mask.any(axis=2)
    return mask.astype(np.uint8)


class PanoramicTeethDataset(torch.utils.data.Dataset):
    def __init__(self, root, split, transforms=None, min_area=64):
        self.root = root
        self.split = split
        self.transforms = transforms
        self.min_area = min_area
        with open(os.path.join(root, "annotations", f"{split}.json")) as f:
            coco = json.load(f)
        self.images = {img["id"]: img for img in coco["images"]}
        self.categories = {c["id"]: c for c in coco["categories"]}
        self.anns = {}
        for ann in coco["annotations"]:
            self.anns.setdefault(ann["image_id"], []).append(ann)
        # keep only images that contain at least one tooth
        self.ids = sorted(i for i in self.images if len(self.anns.get(i, [])) > 0)

    def __len__(self):
        return len(self.ids)

    def _category_to_label(self, cat_id):
        name = self.categories[cat_id]["name"]
        fdi = int(name)
        return FDI_TO_LABEL[fdi]

    def __getitem__(self, idx):
        image_id = self.ids[idx]
        info = self.images[image_id]
        img = Image.open(os.path.join(self.root, "images", self.split, info["file_name"])).convert("RGB")
        w, h = img.size

        boxes, labels, masks, areas, iscrowd = [], [], [], [], []
        for ann in self.anns[image_id]:
            x, y, bw, bh = ann["bbox"]
            if bw * bh < self.min_area:
                continue
            boxes.append([x, y, x + bw, y + bh])
            labels.append(self._category_to_label(ann["category_id"]))
            masks.append(polygons_to_mask(ann["segmentation"], h, w))
            areas.append(ann.get("area", bw * bh))
            iscrowd.append(ann.get("iscrowd", 0))

        target = {
            "boxes": torch.as_tensor(boxes, dtype=torch.float32).reshape(-1, 4),
            "labels": torch.as_tensor(labels, dtype=torch.int64),
            "masks": torch.as_tensor(np.stack(masks) if masks else np.zeros((0, h, w)), dtype=torch.uint8),
            "image_id": image_id,
            "area": torch.as_tensor(areas, dtype=torch.float32),
            "iscrowd": torch.as_tensor(iscrowd, dtype=torch.int64),
        }

        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target

    def get_height_and_width(self, idx):
        info = self.images[self.ids[idx]]
        return info["height"], info["width"]


def summarize(root, split="train"):
    ds = PanoramicTeethDataset(root, split)
    counts = np.zeros(NUM_CLASSES, dtype=np.int64)
    for image_id in ds.ids:
        for ann in ds.anns[image_id]:
            counts[ds._category_to_label(ann["category_id"])] += 1
    for label in range(1, NUM_CLASSES):
        print(f"FDI {LABEL_TO_FDI[label]}: {counts[label]} instances")
    return counts


if __name__ == "__main__":
    import sys
    summarize(sys.argv[1] if len(sys.argv) > 1 else "data/pano")
