#!/usr/bin/env python3
"""Voice liveness / anti-spoofing check for a speaker-verification front door.

Two SpeechBrain models are chained:
  1. a spoofing countermeasure (bona fide vs. spoof, our fine-tuned WavLM/ECAPA CM)
  2. ECAPA-TDNN speaker verification against an enrolment recording

A trial is accepted only if the CM says bona fide AND the ASV score is above
threshold.

Usage:
  python inference/liveness_check.py --cm results/cm_wavlm/save/CKPT+best \
      --enroll data/enroll/spk001.wav --trials trials.txt --out scores.tsv
"""
import argparse
import csv
import os
import time

import torch
import torchaudio
from speechbrain.inference.classifiers import EncoderClassifier
from speechbrain.inference.speaker import SpeakerRecognition

DEFAULT_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SAMPLE_RATE = 16000


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cm", required=True, help="folder with hyperparams.yaml + checkpoint of the CM")
    p.add_argument("--asv", default="speechbrain/spkrec-ecapa-voxceleb")
    p.add_argument("--enroll", required=True)
    p.add_argument("--trials", required=True, help="text file, one wav path per line")
    p.add_argument("--out", default="liveness_scores.tsv")
    p.add_argument("--device", default=DEFAULT_DEVICE)
    p.add_argument("--fp16", action="store_true", help="half precision inference for the CM")
    p.add_argument("--cm-threshold", type=float, default=0.5)
    p.add_argument("--asv-threshold", type=float, default=0.25)
    p.add_argument("--max-seconds", type=float, default=8.0)
    return p.parse_args()


def load_wav(path, max_seconds):
    sig, sr = torchaudio.load(path)
    if sig.size(0) > 1:
        sig = sig.mean(dim=0, keepdim=True)
    if sr != SAMPLE_RATE:
        sig = torchaudio.functional.resample(sig, sr, SAMPLE_RATE)
    max_len = int(max_seconds * SAMPLE_RATE)
    return sig[:, :max_len]


class LivenessChecker:
    def __init__(self, args):
        self.args = args
        self.device = torch.device(args.device)
        self.cm = EncoderClassifier.from_hparams(
            source=args.cm,
            savedir=os.path.join("pretrained_models", "cm"),
            run_opts={"device": args.device},
        )
        # the public ECAPA checkpoint is only ever run on the GPU in production
        self.asv = SpeakerRecognition.from_hparams(
            source=args.asv,
            savedir=os.path.join("pretrained_models", "spkrec-ecapa-voxceleb"),
            run_opts={"device": "cuda"},
        )
        self.cm.eval()
        self.asv.eval()
        self.bonafide_index = self._find_bonafide_index()

    def _find_bonafide_index(self):
        enc = self.cm.hparams.label_encoder
        return enc.encode_label("bonafide")

    @torch.inference_mode()
    def cm_score(self, wav):
        wav = wav.to(self.device)
        with torch.cuda.amp.autocast(dtype=torch.float16, enabled=self.args.fp16):
            out_prob, score, index, text_lab = self.cm.classify_batch(wav)
        return out_prob[0, self.bonafide_index].float().item()

    @torch.inference_mode()
    def asv_score(self, enroll_wav, test_wav):
        score, decision = self.asv.verify_batch(enroll_wav.to(self.device), test_wav.to(self.device))
        return score.squeeze().item()

    def run(self):
        enroll = load_wav(self.args.enroll, self.args.max_seconds)
        with open(self.args.trials) as f:
            trials = [l.strip() for l in f if l.strip()]

        rows = []
        t_total = 0.0
        for path in trials:
            wav = load_wav(path, self.args.max_seconds)
            t0 = time.perf_counter()
            cm = self.cm_score(wav)
            asv = self.asv_score(enroll, wav)
            if str(self.device).startswith("cuda"): torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            t_total += dt
            accept = cm >= self.args.cm_threshold and asv >= self.args.asv_threshold
            rows.append((path, cm, asv, int(accept), dt * 1000.0))

        with open(self.args.out, "w", newline="") as f:
            w = csv.writer(f, delimiter="\t")
            w.writerow(["path", "cm_bonafide_prob", "asv_score", "accept", "latency_ms"])
            w.writerows(rows)

        n = max(len(rows), 1)
        n_acc = sum(r[3] for r in rows)
        print("{} trials, {} accepted, mean latency {:.1f} ms on {}".format(
            len(rows), n_acc, 1000.0 * t_total / n, self.device))


def main():
    args = parse_args()
    checker = LivenessChecker(args)
    checker.run()


if __name__ == "__main__":
    main()
