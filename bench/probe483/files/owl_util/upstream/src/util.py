import json
import subprocess
from collections import defaultdict

import numpy as np
import torch
from torchvision.ops import box_convert as _tv_box_convert


def gpu_mem_used_mb(index=0):
    """Memory in use on the card as reported by the driver (includes other processes)."""
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,nounits,noheader", f"--id={index}"]
    )
    return int(out.decode().strip().split("\n")[0])


class BoxUtil:
    @classmethod
    def box_convert(cls, boxes, in_fmt, out_fmt):
        return _tv_box_convert(boxes, in_fmt, out_fmt)

    @classmethod
    def scale_bounding_box(cls, boxes, width, height, mode="up"):
        scale = torch.tensor([width, height, width, height], dtype=boxes.dtype, device=boxes.device)
        return boxes * scale if mode == "up" else boxes / scale


class GeneralLossAccumulator:
    def __init__(self):
        self.values = defaultdict(list)

    def update(self, losses):
        for k, v in losses.items():
            self.values[k].append(v)

    def get_values(self):
        return {k: float(np.mean(v)) for k, v in self.values.items()}

    def reset(self):
        self.values = defaultdict(list)


class ProgressFormatter:
    def __init__(self):
        self.table = []

    def update(self, epoch, losses, score):
        row = {"epoch": epoch, "score": score, **losses}
        self.table.append(row)
        print(" | ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))

    def save(self, path):
        with open(path, "w") as f:
            json.dump(self.table, f, indent=2)


def labels_to_classnames(labels, classnames):
    return [[classnames[i] for i in lab.tolist()] for lab in labels]
