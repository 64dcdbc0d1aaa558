#!/usr/bin/env python
"""
Score ASVspoof 2021 LA/DF eval, In-the-Wild and our internal call-centre set with
a trained checkpoint, then report EER (and min t-DCF for LA when the ASV scores
are available).

  python eval/score_eval.py --ckpt models/xlsr_sls/best.pth --set df21 \
      --list database/ASVspoof_DF_cm_protocols/ASVspoof2021.DF.cm.eval.trl.txt \
      --wav_dir /data/ASVspoof2021/DF/ASVspoof2021_DF_eval/flac --fp16
"""
import argparse
import os
import sys

import numpy as np
import soundfile as sf
import torch
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model import build_model  # noqa: E402


def pad(x, max_len=64600):
    x_len = x.shape[0]
    if x_len >= max_len:
        return x[:max_len]
    # need to pad
    num_repeats = int(max_len / x_len) + 1
    padded_x = np.tile(x, (1, num_repeats))[:, :max_len][0]
    return padded_x


class EvalSet(Dataset):
    def __init__(self, utt_ids, wav_dir, ext="flac", max_len=64600):
        self.utt_ids = utt_ids
        self.wav_dir = wav_dir
        self.ext = ext
        self.max_len = max_len

    def __len__(self):
        return len(self.utt_ids)

    def __getitem__(self, i):
        utt = self.utt_ids[i]
        x, fs = sf.read(os.path.join(self.wav_dir, "{}.{}".format(utt, self.ext)))
        if x.ndim > 1:
            x = x.mean(axis=1)
        x = pad(x, self.max_len).astype(np.float32)
        return torch.from_numpy(x), utt


def read_trials(path, set_name):
    utts, keys = [], {}
    with open(path) as f:
        for line in f:
            parts = line.strip().split()
            if not parts:
                continue
            if set_name == "itw":
                # in-the-wild meta.csv converted to "file label" lines
                utt, label = parts[0], parts[1]
            elif len(parts) >= 5:
                utt, label = parts[1], parts[5] if len(parts) > 5 else parts[4]
            else:
                utt, label = parts[0], None
            utts.append(utt)
            if label is not None:
                keys[utt] = label
    return utts, keys


def compute_det_curve(target_scores, nontarget_scores):
    n_scores = target_scores.size + nontarget_scores.size
    all_scores = np.concatenate((target_scores, nontarget_scores))
    labels = np.concatenate((np.ones(target_scores.size), np.zeros(nontarget_scores.size)))

    # Sort labels based on scores
    indices = np.argsort(all_scores, kind="mergesort")
    labels = labels[indices]

    # Compute false rejection and false acceptance rates
    tar_trial_sums = np.cumsum(labels)
    nontarget_trial_sums = nontarget_scores.size - (np.arange(1, n_scores + 1) - tar_trial_sums)

    frr = np.concatenate((np.atleast_1d(0), tar_trial_sums / target_scores.size))  # false rejection rates
    far = np.concatenate((np.atleast_1d(1), nontarget_trial_sums / nontarget_scores.size))  # false acceptance rates
    thresholds = np.concatenate((np.atleast_1d(all_scores[indices[0]] - 0.001), all_scores[indices]))  # Thresholds are the sorted scores
    return frr, far, thresholds


def compute_eer(target_scores, nontarget_scores):
    """ Returns equal error rate (EER) and the corresponding threshold. """
    frr, far, thresholds = compute_det_curve(target_scores, nontarget_scores)
    abs_diffs = np.abs(frr - far)
    min_index = np.argmin(abs_diffs)
    eer = np.mean((frr[min_index], far[min_index]))
    return eer, thresholds[min_index]


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--backend", default="sls", choices=["sls", "aasist_lite"])
    p.add_argument("--set", default="df21", choices=["la21", "df21", "itw", "callcentre"])
    p.add_argument("--list", required=True)
    p.add_argument("--wav_dir", required=True)
    p.add_argument("--ext", default="flac")
    p.add_argument("--out", default=None)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--num_workers", type=int, default=8)
    p.add_argument("--fp16", action="store_true")
    return p.parse_args()


def main():
    args = get_args()
    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True

    model = build_model(args, device)
    state = torch.load(args.ckpt)
    if isinstance(state, dict) and "model" in state:
        state = state["model"]
    state = {k.replace("module.", "", 1): v for k, v in state.items()}
    model.load_state_dict(state)
    model = model.to(device).eval()

    utts, keys = read_trials(args.list, args.set)
    loader = DataLoader(EvalSet(utts, args.wav_dir, args.ext), batch_size=args.batch_size,
                        shuffle=False, num_workers=args.num_workers, pin_memory=True)

    out_path = args.out or "scores_{}_{}.txt".format(args.set, os.path.splitext(os.path.basename(args.ckpt))[0])
    scores = {}
    with torch.no_grad():
        for batch_x, batch_utt in tqdm(loader, desc="scoring {}".format(args.set)):
            batch_x = batch_x.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
                out = model(batch_x)
            s = out[:, 1].float().cpu().numpy().ravel()
            for u, v in zip(batch_utt, s):
                scores[u] = float(v)

    with open(out_path, "w") as fh:
        for u in utts:
            fh.write("{} {}\n".format(u, scores[u]))
    print("scores written to", out_path)

    if keys:
        bona = np.array([scores[u] for u in utts if keys.get(u) in ("bonafide", "bona-fide")])
        spoof = np.array([scores[u] for u in utts if keys.get(u) == "spoof"])
        if bona.size and spoof.size:
            eer, thr = compute_eer(bona, spoof)
            print("{}: EER = {:.3f}% (thr {:.4f}), {} bona fide / {} spoof".format(
                args.set, eer * 100, thr, bona.size, spoof.size))


if __name__ == "__main__":
    main()
