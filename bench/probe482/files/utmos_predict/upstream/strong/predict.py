"""Predict UTMOS scores for a directory of wav files with a trained strong learner.

    python predict.py --ckpt_path epoch=3-step=7459.ckpt --wav_dir /data/main/DATA/wav --out_path answer.txt
"""
import argparse
import os
import pathlib

import numpy as np
import torch
import torchaudio
from tqdm import tqdm

import lightning_module


def get_arg():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt_path", required=True, type=str, help="path to the lightning checkpoint")
    parser.add_argument("--wav_dir", required=True, type=str)
    parser.add_argument("--out_path", default="answer.txt", type=str)
    parser.add_argument("--domain", default=0, type=int, help="0: main track, 1: OOD track, 2: unlabeled")
    parser.add_argument("--judge_id", default=288, type=int, help="mean listener id")
    parser.add_argument("--gpu", default=0, type=int, help="gpu id, -1 for cpu")
    return parser.parse_args()


class ChunkedWavLoader:
    """Loads 16 kHz mono wavs; longer files are cut into chunks so the SSL
    encoder does not run out of GPU memory."""

    def __init__(self, wav_dir, sr=16000, max_seconds=20):
        self.wav_paths = sorted(pathlib.Path(wav_dir).glob("*.wav"))
        self.sr = sr
        self.max_len = max_seconds * sr

    def __len__(self):
        return len(self.wav_paths)

    def __iter__(self):
        for path in self.wav_paths:
            wav, sr = torchaudio.load(path)
            if sr != self.sr:
                wav = torchaudio.functional.resample(wav, sr, self.sr)
            wav = wav.mean(dim=0, keepdim=True)
            chunks = torch.split(wav, self.max_len, dim=1)
            yield path.name, chunks


@torch.no_grad()
def main():
    args = get_arg()
    if args.gpu >= 0 and torch.cuda.is_available():
        device = torch.device(f"cuda:{args.gpu}")
    else:
        device = torch.device("cpu")
    print(f"running inference on {device}")

    model = lightning_module.BaselineLightningModule.load_from_checkpoint(args.ckpt_path).eval()
    model = model.to(device)

    loader = ChunkedWavLoader(args.wav_dir)
    results = []
    for name, chunks in tqdm(loader, total=len(loader)):
        scores = []
        for wav in chunks:
            batch = {
                'wav': wav.unsqueeze(0).to(device),
                'domains': torch.tensor([args.domain], device=device),
                'judge_id': torch.tensor([args.judge_id], device=device),
            }
            output = model(batch)
            scores.append(output.mean(dim=1).squeeze().item() * 2 + 3)
        results.append((name, float(np.mean(scores))))
        if device.type == "cuda":
            torch.cuda.empty_cache()

    os.makedirs(os.path.dirname(os.path.abspath(args.out_path)), exist_ok=True)
    with open(args.out_path, "w") as fw:
        for name, score in results:
            fw.write(f"{name},{score}\n")
    print(f"wrote {len(results)} predictions to {args.out_path}")


if __name__ == "__main__":
    main()
