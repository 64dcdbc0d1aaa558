"""
Score a directory of executables with a trained MalConv / MalConvGCT checkpoint.

    python score_files.py --checkpoint malconvGCT_nocat.checkpoint --out scores.csv /data/samples

The published checkpoints were trained on GPU, so the state dicts contain CUDA
tensors. Results are written as "path,score" lines where score is the softmax
probability of the malicious class.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from binaryLoader import ExeListDataset, pad_collate_func
from MalConvGCT_nocat import MalConvGCT, getParams


def list_files(root):
    out = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            out.append(os.path.join(dirpath, f))
    return sorted(out)


def write_list(paths, tmp_csv):
    with open(tmp_csv, "w") as fh:
        for p in paths:
            fh.write("{},0\n".format(p))


def build_model(ckpt):
    params = getParams()
    channels = ckpt.get("channels", params["channels"])
    window = ckpt.get("filter_size", params["filter_size"])
    stride = ckpt.get("stride", params["stride"])
    embd = ckpt.get("embd_dim", params["embd_size"])
    model = MalConvGCT(channels=channels, window_size=window, stride=stride, embd_size=embd)
    missing, unexpected = model.load_state_dict(ckpt["model_state_dict"], strict=False)
    if missing:
        print("missing keys:", missing, file=sys.stderr)
    if unexpected:
        print("unexpected keys:", unexpected, file=sys.stderr)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root", help="directory of files to score")
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", default="scores.csv")
    ap.add_argument("--max_len", type=int, default=16000000)
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--cpu", action="store_true", help="force CPU even when a GPU is present")
    args = ap.parse_args()

    use_gpu = torch.cuda.is_available() and not args.cpu
    device = torch.device("cuda" if use_gpu else "cpu")

    ckpt = torch.load(args.checkpoint)
    model = build_model(ckpt).to(device)
    model.eval()

    paths = list_files(args.root)
    if not paths:
        print("no files found under", args.root)
        return 1
    tmp_csv = args.out + ".list"
    write_list(paths, tmp_csv)

    ds = ExeListDataset(tmp_csv, max_len=args.max_len)
    loader = DataLoader(ds, batch_size=args.batch_size, num_workers=args.workers,
                        collate_fn=pad_collate_func, pin_memory=use_gpu)

    scores = []
    t0 = time.time()
    with torch.no_grad():
        for inputs, _ in loader:
            logits, _, _ = model(inputs)
            probs = F.softmax(logits, dim=-1)[:, 1]
            scores.extend(probs.cpu().numpy().tolist())
    if use_gpu:
        torch.cuda.synchronize()
    elapsed = time.time() - t0

    with open(args.out, "w") as fh:
        fh.write("path,score\n")
        for p, s in zip(ds.rows, scores):
            fh.write("{},{:.6f}\n".format(p[0], s))
    os.remove(tmp_csv)

    print("scored {} files in {:.1f}s ({:.2f} files/s) on {}".format(
        len(scores), elapsed, len(scores) / max(elapsed, 1e-6), device))
    if use_gpu:
        print("GPU:", torch.cuda.get_device_name(device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
