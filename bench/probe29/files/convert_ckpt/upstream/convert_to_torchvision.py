#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved
"""
Convert a self-supervised pre-training checkpoint (MoCo / DINO / SwAV) into a plain
torchvision ResNet-50 / timm ViT state_dict.

The checkpoints were saved from DistributedDataParallel on 8 or 64 GPUs, so every key carries a
"module." prefix. Nothing here needs a GPU: everything is loaded onto the CPU.
"""
import argparse
import os
import pickle as pkl
import sys

import torch

PREFIXES = {
    "moco_v2": "module.encoder_q.",
    "moco_v3": "module.base_encoder.",
    "dino": "module.backbone.",
    "swav": "module.",
}


def parse_args():
    parser = argparse.ArgumentParser(description="Convert SSL checkpoint to torchvision/detectron2 format")
    parser.add_argument("input", type=str, help="checkpoint written by main_moco.py / main_dino.py (GPU run)")
    parser.add_argument("output", type=str)
    parser.add_argument("--method", default="moco_v2", choices=sorted(PREFIXES))
    parser.add_argument("--checkpoint-key", default=None, type=str,
                        help="'teacher' or 'student' for DINO, 'state_dict' otherwise")
    parser.add_argument("--format", default="torchvision", choices=["torchvision", "detectron2"])
    parser.add_argument("--device", default="cpu", help="where to put the tensors (cpu is enough)")
    return parser.parse_args()


def strip_prefix(state_dict, prefix, drop_heads=("fc.", "head.", "projector", "prototypes")):
    out = {}
    for k, v in state_dict.items():
        if not k.startswith(prefix):
            continue
        k = k[len(prefix):]
        if k.startswith(drop_heads):
            continue
        out[k] = v
    return out


def to_detectron2(state_dict):
    newmodel = {}
    for k, v in state_dict.items():
        old_k = k
        if "layer" not in k:
            k = "stem." + k
        for t in [1, 2, 3, 4]:
            k = k.replace("layer{}".format(t), "res{}".format(t + 1))
        for t in [1, 2, 3]:
            k = k.replace("bn{}".format(t), "conv{}.norm".format(t))
        k = k.replace("downsample.0", "shortcut")
        k = k.replace("downsample.1", "shortcut.norm")
        print(old_k, "->", k)
        newmodel[k] = v.numpy()
    return {"model": newmodel, "__author__": "MOCO", "matching_heuristics": True}


def main():
    args = parse_args()
    if not os.path.isfile(args.input):
        sys.exit("no checkpoint at {}".format(args.input))
    ckpt = torch.load(args.input, map_location="cpu")
    key = args.checkpoint_key or ("teacher" if args.method == "dino" else "state_dict")
    if key in ckpt:
        ckpt = ckpt[key]
    state_dict = strip_prefix(ckpt, PREFIXES[args.method])
    if args.method == "dino":
        # DINO teacher keys have no "module." prefix when saved from the EMA copy
        state_dict.update(strip_prefix(ckpt, "backbone."))
    state_dict = {k: v.to(args.device) for k, v in state_dict.items()}
    print("kept {} tensors".format(len(state_dict)))

    if args.format == "detectron2":
        with open(args.output, "wb") as f:
            pkl.dump(to_detectron2(state_dict), f)
    else:
        # is_cuda is always False here: the tensors were mapped to CPU above
        n_cuda = sum(int(v.is_cuda) for v in state_dict.values())
        assert n_cuda == 0 or args.device != "cpu"
        torch.save(state_dict, args.output)
    print("saved", args.output)


if __name__ == "__main__":
    main()
