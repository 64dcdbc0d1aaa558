#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
"""Spoken language identification with the MMS LID models (126 .. 4017 languages).

    python examples/mms/lid/infer_lid.py --model facebook/mms-lid-256 \
        --manifest clips.txt --top-k 3 --num-workers 4 > lid.tsv
"""
import argparse
import logging
import sys
from typing import Dict, List, Sequence

import numpy as np
import soundfile as sf
import torch
import torchaudio
from torch.utils.data import DataLoader, Dataset
from transformers import AutoFeatureExtractor, Wav2Vec2ForSequenceClassification

logger = logging.getLogger("mms_lid")

SR = 16_000


class ClipDataset(Dataset):
    """Reads mono 16 kHz clips, cropping to max_seconds (LID needs only a few seconds)."""

    def __init__(self, paths: Sequence[str], max_seconds: float = 10.0):
        self.paths = list(paths)
        self.max_len = int(max_seconds * SR)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, idx: int):
        path = self.paths[idx]
        wav, sr = sf.read(path, dtype="float32", always_2d=True)
        wav = wav.mean(axis=1)
        if sr != SR:
            wav = torchaudio.functional.resample(torch.from_numpy(wav), sr, SR).numpy()
        if len(wav) > self.max_len:
            start = (len(wav) - self.max_len) // 2
            wav = wav[start:start + self.max_len]
        return path, wav


class Collator:
    def __init__(self, feature_extractor):
        self.fe = feature_extractor

    def __call__(self, batch):
        paths = [b[0] for b in batch]
        feats = self.fe([b[1] for b in batch], sampling_rate=SR, return_tensors="pt", padding=True,
                        return_attention_mask=True)
        return paths, feats


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="facebook/mms-lid-126")
    p.add_argument("--manifest", required=True, help="one audio path per line")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--top-k", type=int, default=1)
    p.add_argument("--max-seconds", type=float, default=10.0)
    p.add_argument("--fp16", action="store_true", help="run the encoder under fp16 autocast")
    return p.parse_args()


def read_manifest(path: str) -> List[str]:
    with open(path) as f:
        return [l.strip().split("\t")[0] for l in f if l.strip()]


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    logger.info("Using device %s", device)

    fe = AutoFeatureExtractor.from_pretrained(args.model)
    model = Wav2Vec2ForSequenceClassification.from_pretrained(args.model)
    model.to(device).eval()
    id2label: Dict[int, str] = model.config.id2label

    ds = ClipDataset(read_manifest(args.manifest), args.max_seconds)
    loader = DataLoader(
        ds,
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        collate_fn=Collator(fe),
        pin_memory=torch.cuda.is_available(),
        shuffle=False,
    )

    n = 0
    with torch.inference_mode():
        for paths, feats in loader:
            input_values = feats["input_values"].to(device, non_blocking=True)
            attention_mask = feats["attention_mask"].to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):
                logits = model(input_values, attention_mask=attention_mask).logits
            probs = torch.softmax(logits.float(), dim=-1)
            top_p, top_i = probs.topk(args.top_k, dim=-1)
            for path, ps, ids in zip(paths, top_p.cpu().numpy(), top_i.cpu().numpy()):
                preds = "\t".join(f"{id2label[int(i)]}:{p:.3f}" for p, i in zip(ps, ids))
                print(f"{path}\t{preds}")
            n += len(paths)
            if n % (args.batch_size * 50) == 0:
                logger.info("processed %d clips", n)
    logger.info("done: %d clips", n)


if __name__ == "__main__":
    main()
