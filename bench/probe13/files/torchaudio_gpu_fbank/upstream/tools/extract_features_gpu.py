#!/usr/bin/env python3
"""Extract log-mel / MFCC features for a manifest of wav files on the GPU with torchaudio.

Reads a jsonl manifest ({"audio_filepath": ..., "duration": ...}), resamples to 16 kHz,
computes 80-dim log-mel features and stores them in one .pt shard per N utterances.

    python tools/extract_features_gpu.py --manifest train.jsonl --out-dir feats/ --device cuda:0
"""
import argparse
import json
import logging
import os
import threading
import queue
from pathlib import Path

import torch
import torchaudio
import torchaudio.compliance.kaldi as kaldi
import torchaudio.transforms as T

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--manifest", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--sample-rate", type=int, default=16000)
    p.add_argument("--num-mel-bins", type=int, default=80)
    p.add_argument("--shard-size", type=int, default=2000)
    p.add_argument("--kaldi-compat", action="store_true", help="use kaldi.fbank (per utterance) instead of MelSpectrogram")
    p.add_argument("--prefetch", type=int, default=64)
    return p.parse_args()


class AudioPrefetcher(threading.Thread):
    """Reads and decodes audio on a background thread into pinned host memory."""

    def __init__(self, items, q: queue.Queue):
        super().__init__(daemon=True)
        self.items = items
        self.q = q

    def run(self):
        for item in self.items:
            wav, sr = torchaudio.load(item["audio_filepath"])
            wav = wav.mean(dim=0, keepdim=True).pin_memory()
            self.q.put((item, wav, sr))
        self.q.put(None)


def main():
    args = get_args()
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.cufft_plan_cache.max_size = 64

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    with open(args.manifest, encoding="utf-8") as f:
        items = [json.loads(line) for line in f if line.strip()]
    logging.info("%d utterances", len(items))

    mel = T.MelSpectrogram(
        sample_rate=args.sample_rate,
        n_fft=400,
        win_length=400,
        hop_length=160,
        n_mels=args.num_mel_bins,
        power=2.0,
    ).to(device)
    resamplers = {}

    q: queue.Queue = queue.Queue(maxsize=args.prefetch)
    AudioPrefetcher(items, q).start()

    copy_stream = torch.cuda.Stream()
    shard, shard_idx = {}, 0
    while True:
        got = q.get()
        if got is None:
            break
        item, wav, sr = got
        with torch.cuda.stream(copy_stream):
            wav = wav.to(device, non_blocking=True)
        torch.cuda.current_stream().wait_stream(copy_stream)

        if sr != args.sample_rate:
            if sr not in resamplers:
                resamplers[sr] = T.Resample(sr, args.sample_rate).to(device)
            wav = resamplers[sr](wav)

        with torch.no_grad():
            if args.kaldi_compat:
                feats = kaldi.fbank(wav * 32768, num_mel_bins=args.num_mel_bins, sample_frequency=args.sample_rate,
                                    dither=0.0, energy_floor=0.0)
            else:
                feats = (mel(wav) + 1e-6).log().squeeze(0).transpose(0, 1)
        shard[Path(item["audio_filepath"]).stem] = feats.half().cpu()

        if len(shard) >= args.shard_size:
            torch.save(shard, out_dir / f"feats.{shard_idx:05d}.pt")
            logging.info("wrote shard %d (mem %.1f MB)", shard_idx, torch.cuda.memory_allocated(device) / 2**20)
            shard, shard_idx = {}, shard_idx + 1

    if shard:
        torch.save(shard, out_dir / f"feats.{shard_idx:05d}.pt")
    logging.info("done")


if __name__ == "__main__":
    main()
