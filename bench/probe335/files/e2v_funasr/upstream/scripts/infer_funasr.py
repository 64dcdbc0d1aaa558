#!/usr/bin/env python3
"""Batch emotion recognition with the released emotion2vec+ checkpoints via FunASR.

    python scripts/infer_funasr.py --wav_scp data/test/wav.scp --out results/emo.jsonl \
        --model iic/emotion2vec_plus_large --device cuda:0 --batch_size 16

Each output line: {"key": ..., "labels": [...], "scores": [...], "pred": ...}
"""
import argparse
import json
import logging
import os
import time

import numpy as np
import torch
from funasr import AutoModel

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
logger = logging.getLogger("infer_funasr")

EMO_EN = {
    "生气/angry": "angry",
    "厌恶/disgusted": "disgusted",
    "恐惧/fearful": "fearful",
    "开心/happy": "happy",
    "中立/neutral": "neutral",
    "其他/other": "other",
    "难过/sad": "sad",
    "吃惊/surprised": "surprised",
    "<unk>": "unk",
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--wav_scp", required=True, help="kaldi style '<key> <path>' list")
    p.add_argument("--out", required=True)
    p.add_argument("--model", default="iic/emotion2vec_plus_large")
    p.add_argument("--hub", default="ms", choices=["ms", "hf"], help="modelscope or huggingface")
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--granularity", default="utterance", choices=["utterance", "frame"])
    p.add_argument("--extract_embedding", action="store_true")
    p.add_argument("--emb_dir", default=None)
    return p.parse_args()


def read_scp(path):
    items = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.strip().split(maxsplit=1)
            if len(parts) == 2:
                items.append((parts[0], parts[1]))
    return items


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def main():
    args = parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        logger.warning("no GPU found, running emotion2vec on CPU")
        args.device = "cpu"

    model = AutoModel(model=args.model, hub=args.hub, device=args.device, disable_update=True)
    items = read_scp(args.wav_scp)
    logger.info(f"{len(items)} utterances, batch size {args.batch_size}, device {args.device}")
    if args.extract_embedding and args.emb_dir:
        os.makedirs(args.emb_dir, exist_ok=True)

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    n_done, t_audio, t0 = 0, 0.0, time.time()
    with open(args.out, "w", encoding="utf-8") as fout:
        for batch in chunks(items, args.batch_size):
            keys = [k for k, _ in batch]
            paths = [p for _, p in batch]
            results = model.generate(
                paths,
                output_dir=None,
                granularity=args.granularity,
                extract_embedding=args.extract_embedding,
                batch_size=len(paths),
            )
            for key, res in zip(keys, results):
                scores = [float(s) for s in res["scores"]]
                labels = [EMO_EN.get(l, l) for l in res["labels"]]
                pred = labels[int(np.argmax(scores))]
                fout.write(json.dumps({"key": key, "labels": labels, "scores": scores, "pred": pred}, ensure_ascii=False) + "\n")
                if args.extract_embedding and args.emb_dir and "feats" in res:
                    np.save(os.path.join(args.emb_dir, key + ".npy"), res["feats"])
            n_done += len(batch)
            if n_done % (20 * args.batch_size) == 0:
                logger.info(f"{n_done}/{len(items)} done, {n_done / (time.time() - t0):.1f} utt/s")
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
        logger.info(f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    logger.info(f"finished {n_done} utterances in {time.time() - t0:.1f}s -> {args.out}")


if __name__ == "__main__":
    main()
