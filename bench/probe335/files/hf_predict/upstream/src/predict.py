#!/usr/bin/env python
"""Run a fine-tuned SER checkpoint over a folder / csv of wav files.

    python src/predict.py --model exp/hubert_large_msp/checkpoint-best \
        --input data/msp/test.csv --out exp/hubert_large_msp/test_pred.csv --half
"""
import argparse
import csv
import glob
import os
import time

import librosa
import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoFeatureExtractor

from modeling_ser import Wav2Vec2ForSpeechClassification

DEVICE = "cuda:0" if torch.cuda.is_available() else "cpu"


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True, help="csv with a `path` column, or a directory of wavs")
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--half", action="store_true", help="fp16 inference (GPU only)")
    ap.add_argument("--max_sec", type=float, default=20.0)
    ap.add_argument("--device", default=DEVICE)
    return ap.parse_args()


def list_inputs(inp):
    if os.path.isdir(inp):
        return sorted(glob.glob(os.path.join(inp, "**", "*.wav"), recursive=True))
    with open(inp, newline="") as f:
        return [row["path"] for row in csv.DictReader(f)]


def load(path, sr, max_sec):
    wav, _ = librosa.load(path, sr=sr, mono=True)
    return wav[: int(max_sec * sr)]


@torch.inference_mode()
def predict_batch(model, fe, wavs, device, half):
    inputs = fe(wavs, sampling_rate=fe.sampling_rate, padding=True, return_tensors="pt", return_attention_mask=True)
    input_values = inputs.input_values.to(device)
    attention_mask = inputs.attention_mask.to(device)
    if half:
        input_values = input_values.half()
    logits = model(input_values, attention_mask=attention_mask).logits
    return F.softmax(logits.float(), dim=-1).cpu().numpy()


def main():
    args = get_args()
    config = AutoConfig.from_pretrained(args.model)
    fe = AutoFeatureExtractor.from_pretrained(args.model)
    model = Wav2Vec2ForSpeechClassification.from_pretrained(args.model, config=config, attn_implementation="sdpa")
    model.eval()
    model.to(args.device)
    if args.half and args.device.startswith("cuda"):
        model.half()
    elif args.half:
        print("--half ignored: fp16 inference is only enabled on CUDA devices")
        args.half = False

    paths = list_inputs(args.input)
    id2label = config.id2label
    rows, t0, audio_sec = [], time.time(), 0.0
    for i in range(0, len(paths), args.batch_size):
        chunk = paths[i : i + args.batch_size]
        wavs = [load(p, fe.sampling_rate, args.max_sec) for p in chunk]
        audio_sec += sum(len(w) for w in wavs) / fe.sampling_rate
        probs = predict_batch(model, fe, wavs, args.device, args.half)
        for p, pr in zip(chunk, probs):
            k = int(np.argmax(pr))
            rows.append([p, id2label[k], f"{pr[k]:.4f}"] + [f"{x:.4f}" for x in pr])

    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    elapsed = time.time() - t0
    print(f"{len(paths)} files, {audio_sec / 3600:.2f} h audio, RTF {elapsed / max(audio_sec, 1e-6):.4f}")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["path", "pred", "conf"] + [id2label[i] for i in range(len(id2label))])
        w.writerows(rows)


if __name__ == "__main__":
    main()
