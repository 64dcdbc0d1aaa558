#!/usr/bin/env python3
"""Score a directory of wav files with the pretrained SpeechBrain IEMOCAP
emotion model (speechbrain/emotion-recognition-wav2vec2-IEMOCAP).

    python inference_emotion.py --wav_dir /data/calls/2024-05 --out emotions.tsv
"""
import argparse
import glob
import os
import sys

import torch
import torchaudio
from speechbrain.inference.interfaces import foreign_class

MODEL_SOURCE = "speechbrain/emotion-recognition-wav2vec2-IEMOCAP"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--wav_dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--savedir", default="pretrained_models/emotion-recognition-wav2vec2-IEMOCAP")
    p.add_argument("--cpu", action="store_true", help="force CPU even if a GPU is present")
    p.add_argument("--batch", type=int, default=8)
    return p.parse_args()


def load_classifier(savedir, use_gpu):
    run_opts = {"device": "cuda:0"} if use_gpu else {"device": "cpu"}
    classifier = foreign_class(
        source=MODEL_SOURCE,
        pymodule_file="custom_interface.py",
        classname="CustomEncoderWav2vec2Classifier",
        savedir=savedir,
        run_opts=run_opts,
    )
    classifier.mods.eval()
    return classifier


def batched(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


@torch.no_grad()
def classify_batch(classifier, paths):
    wavs = []
    for p in paths:
        sig, sr = torchaudio.load(p)
        if sr != 16000:
            sig = torchaudio.functional.resample(sig, sr, 16000)
        wavs.append(sig.mean(0))
    lens = torch.tensor([w.shape[0] for w in wavs], dtype=torch.float)
    lens = lens / lens.max()
    batch = torch.nn.utils.rnn.pad_sequence(wavs, batch_first=True)
    out_prob, score, index, text_lab = classifier.classify_batch(batch, lens)
    return out_prob.exp().cpu(), text_lab


def main():
    args = parse_args()
    use_gpu = torch.cuda.is_available() and not args.cpu
    classifier = load_classifier(args.savedir, use_gpu)
    print(f"loaded {MODEL_SOURCE} on {classifier.device}", file=sys.stderr)

    paths = sorted(glob.glob(os.path.join(args.wav_dir, "**", "*.wav"), recursive=True))
    labels = classifier.hparams.label_encoder.decode_ndim(torch.arange(4))
    with open(args.out, "w") as f:
        f.write("path\tpred\t" + "\t".join(labels) + "\n")
        for chunk in batched(paths, args.batch):
            probs, preds = classify_batch(classifier, chunk)
            for p, pr, lab in zip(chunk, probs, preds):
                f.write(f"{p}\t{lab}\t" + "\t".join(f"{x:.4f}" for x in pr.tolist()) + "\n")
    print(f"wrote {len(paths)} rows to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
