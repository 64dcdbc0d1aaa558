#!/usr/bin/env python3
"""Separate every wav file of a folder with a pretrained SepFormer from the
HuggingFace hub (speechbrain/sepformer-wham by default).

Example:
    python tools/separate_folder.py --in_dir mixtures/ --out_dir separated/
"""
import argparse
import glob
import os

import torch
import torchaudio
from speechbrain.pretrained import SepformerSeparation as separator


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--in_dir", required=True)
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--source", default="speechbrain/sepformer-wham")
    parser.add_argument("--savedir", default="pretrained_models/sepformer-wham")
    parser.add_argument("--cpu", action="store_true", help="force CPU inference")
    args = parser.parse_args()

    device = "cpu" if args.cpu or not torch.cuda.is_available() else "cuda"
    model = separator.from_hparams(
        source=args.source,
        savedir=args.savedir,
        run_opts={"device": device},
    )
    sr = model.hparams.sample_rate

    os.makedirs(args.out_dir, exist_ok=True)
    files = sorted(glob.glob(os.path.join(args.in_dir, "*.wav")))
    print(f"Separating {len(files)} files on {device}")
    for path in files:
        mix, fs = torchaudio.load(path)
        if fs != sr:
            mix = torchaudio.functional.resample(mix, fs, sr)
        with torch.no_grad():
            est_sources = model.separate_batch(mix.to(device))
        est_sources = est_sources / est_sources.abs().max(dim=1, keepdim=True)[0]
        base = os.path.splitext(os.path.basename(path))[0]
        for spk in range(est_sources.shape[-1]):
            out = os.path.join(args.out_dir, f"{base}_s{spk + 1}.wav")
            torchaudio.save(out, est_sources[:, :, spk].detach().cpu(), sr)
    if device == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
