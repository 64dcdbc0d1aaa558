# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
"""
Extract utterance-level and frame-level emotion2vec features from a list of
wav files. Features are written as .npy files (frame-level) and a single
.npy + .lengths pair (utterance-level) that the downstream trainer consumes.

Example:
    python scripts/extract_features.py \
        --source_file data/iemocap/train.tsv \
        --target_file features/iemocap/train \
        --model_dir ./upstream \
        --checkpoint_dir ./emotion2vec_base.pt \
        --granularity frame --layer 11
"""

import argparse
import logging
import os
import os.path as osp
import sys
from dataclasses import dataclass

import numpy as np
import soundfile as sf
import torch
import torch.nn.functional as F
import tqdm

import fairseq
from fairseq import checkpoint_utils

logging.basicConfig(
    format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
    datefmt="%Y-%m-%d %H:%M:%S",
    level=os.environ.get("LOGLEVEL", "INFO").upper(),
    stream=sys.stdout,
)
logger = logging.getLogger("emotion2vec.extract_features")


@dataclass
class UserDirModule:
    user_dir: str


def get_parser():
    parser = argparse.ArgumentParser(
        description="extract emotion2vec features for downstream tasks"
    )
    parser.add_argument("--source_file", required=True, help="tsv manifest (root on first line)")
    parser.add_argument("--target_file", required=True, help="prefix of output files")
    parser.add_argument("--model_dir", type=str, required=True, help="path to the upstream user dir")
    parser.add_argument("--checkpoint_dir", type=str, required=True, help="path to emotion2vec checkpoint")
    parser.add_argument("--granularity", type=str, default="utterance", choices=["utterance", "frame"])
    parser.add_argument("--layer", type=int, default=-1, help="which transformer block to read (-1 = last)")
    parser.add_argument("--max_sec", type=float, default=30.0, help="crop longer utterances")
    parser.add_argument("--gpu", type=int, default=0, help="GPU id to run the extractor on")
    parser.add_argument("--fp16", action="store_true", help="run the extractor in half precision")
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--num_shards", type=int, default=1)
    return parser


def read_manifest(path, shard, num_shards):
    with open(path, "r") as f:
        root = f.readline().strip()
        lines = [line.rstrip("\n") for line in f if line.strip()]
    per_shard = (len(lines) + num_shards - 1) // num_shards
    start = shard * per_shard
    end = min(len(lines), start + per_shard)
    items = []
    for line in lines[start:end]:
        fname, n_samples = line.split("\t")[:2]
        items.append((osp.join(root, fname), int(n_samples)))
    logger.info(f"shard {shard}/{num_shards}: {len(items)} of {len(lines)} utterances")
    return items


def load_wav(path, max_samples):
    wav, sr = sf.read(path)
    if wav.ndim == 2:
        # stereo IEMOCAP sessions: average the channels
        wav = wav.mean(-1)
    assert sr == 16000, f"expected 16kHz audio, got {sr} for {path}"
    if max_samples > 0 and len(wav) > max_samples:
        wav = wav[:max_samples]
    return wav


def build_model(args):
    model_path = UserDirModule(args.model_dir)
    fairseq.utils.import_user_module(model_path)
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [args.checkpoint_dir],
        arg_overrides={"data": args.model_dir, "normalize": False},
    )
    model = models[0]
    model.eval()
    model.cuda()
    if args.fp16:
        model.half()
    return model, cfg, task


@torch.no_grad()
def extract_one(model, wav, task_cfg, granularity, layer, fp16):
    source = torch.from_numpy(wav).float().cuda()
    if task_cfg.normalize:
        source = F.layer_norm(source, source.shape)
    source = source.view(1, -1)
    if fp16:
        source = source.half()
    feats = model.extract_features(source, padding_mask=None, mask=False, remove_extra_tokens=True)
    if layer >= 0 and "layer_results" in feats and feats["layer_results"]:
        x = feats["layer_results"][layer][0]
    else:
        x = feats["x"]
    x = x.squeeze(0).float()
    if granularity == "utterance":
        x = torch.mean(x, dim=0)
    return x.cpu().numpy()


def main():
    parser = get_parser()
    args = parser.parse_args()
    logger.info(args)

    torch.cuda.set_device(args.gpu)
    logger.info(f"running on {torch.cuda.get_device_name(args.gpu)}")

    model, cfg, task = build_model(args)
    max_samples = int(args.max_sec * 16000)

    items = read_manifest(args.source_file, args.shard, args.num_shards)
    os.makedirs(osp.dirname(args.target_file) or ".", exist_ok=True)

    if args.granularity == "frame":
        out_dir = args.target_file + "_frames"
        os.makedirs(out_dir, exist_ok=True)

    utt_feats, lengths = [], []
    for path, _ in tqdm.tqdm(items, desc="extract"):
        wav = load_wav(path, max_samples)
        try:
            feat = extract_one(model, wav, task.cfg, args.granularity, args.layer, args.fp16)
        except RuntimeError as e:
            if "out of memory" in str(e):
                logger.warning(f"OOM on {path} ({len(wav) / 16000:.1f}s), retrying after cache flush")
                torch.cuda.empty_cache()
                feat = extract_one(model, wav[: max_samples // 2], task.cfg, args.granularity, args.layer, args.fp16)
            else:
                raise
        if args.granularity == "frame":
            name = osp.splitext(osp.basename(path))[0]
            np.save(osp.join(out_dir, name + ".npy"), feat)
            lengths.append(feat.shape[0])
        else:
            utt_feats.append(feat)
            lengths.append(1)

    if args.granularity == "utterance":
        np.save(args.target_file + ".npy", np.stack(utt_feats, axis=0))
    with open(args.target_file + ".lengths", "w") as f:
        for n in lengths:
            print(n, file=f)
    logger.info(f"wrote {len(lengths)} items to {args.target_file}")


if __name__ == "__main__":
    main()
