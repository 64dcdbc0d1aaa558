#!/usr/bin/env python3
"""Classify every wav file in a folder with the pretrained IEMOCAP wav2vec2 model
published on the HuggingFace hub (speechbrain/emotion-recognition-wav2vec2-IEMOCAP).

    python classify_folder.py /path/to/wavs --out predictions.csv

Authors
 * Yingzhi WANG 2021
"""
import argparse
import csv
import glob
import os

import torch
from speechbrain.inference.interfaces import foreign_class


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", help="folder with 16 kHz mono wav files")
    parser.add_argument("--out", default="predictions.csv")
    parser.add_argument(
        "--source", default="speechbrain/emotion-recognition-wav2vec2-IEMOCAP"
    )
    parser.add_argument("--savedir", default="pretrained_models/emotion-recognition-wav2vec2-IEMOCAP")
    return parser.parse_args()


def main():
    args = parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"

    classifier = foreign_class(
        source=args.source,
        savedir=args.savedir,
        pymodule_file="custom_interface.py",
        classname="CustomEncoderWav2vec2Classifier",
        run_opts={"device": device},
    )

    files = sorted(glob.glob(os.path.join(args.folder, "**", "*.wav"), recursive=True))
    print(f"Found {len(files)} files, running on {device}")

    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["file", "label", "score"])
        for path in files:
            out_prob, score, index, text_lab = classifier.classify_file(path)
            writer.writerow([path, text_lab[0], f"{score.item():.4f}"])

    print(f"Wrote {args.out}")


if __name__ == "__main__":
    main()
