"""CSV-driven clip dataset for BEATs fine-tuning (ESC-50 / AudioSet-20K style).

CSV columns: filename,labels  (labels = ';'-separated class names or a single index)."""
import csv
import random

import numpy as np
import torch
import torchaudio


def load_label_map(label_csv):
    with open(label_csv) as f:
        rows = list(csv.DictReader(f))
    return {r["display_name"]: int(r["index"]) for r in rows}


class AudioClipDataset(torch.utils.data.Dataset):
    def __init__(self, csv_path, label_csv, sample_rate=16000, clip_seconds=10.0, train=True, multilabel=False):
        with open(csv_path) as f:
            self.rows = list(csv.DictReader(f))
        self.label_map = load_label_map(label_csv)
        self.num_classes = len(self.label_map)
        self.sample_rate = sample_rate
        self.clip_len = int(sample_rate * clip_seconds)
        self.train = train
        self.multilabel = multilabel

    def __len__(self):
        return len(self.rows)

    def _load(self, path):
        wav, sr = torchaudio.load(path)
        wav = wav.mean(0)  # mono
        if sr != self.sample_rate:
            wav = torchaudio.functional.resample(wav, sr, self.sample_rate)
        return wav

    def __getitem__(self, idx):
        row = self.rows[idx]
        wav = self._load(row["filename"])
        n = wav.shape[0]
        if n > self.clip_len:
            start = random.randint(0, n - self.clip_len) if self.train else 0
            wav = wav[start:start + self.clip_len]
            valid = self.clip_len
        else:
            valid = n
            wav = torch.nn.functional.pad(wav, (0, self.clip_len - n))
        padding_mask = torch.zeros(self.clip_len, dtype=torch.bool)
        padding_mask[valid:] = True

        if self.train:
            gain = 10 ** (random.uniform(-6, 6) / 20)
            wav = wav * gain

        if self.multilabel:
            target = torch.zeros(self.num_classes)
            for name in row["labels"].split(";"):
                target[self.label_map[name]] = 1.0
        else:
            target = torch.tensor(int(row["labels"]), dtype=torch.long)
        return wav, padding_mask, target


def collate_fn(batch):
    wavs, masks, targets = zip(*batch)
    return torch.stack(wavs), torch.stack(masks), torch.stack(targets)


def mixup(wav, target, alpha=0.8):
    """Batch mixup on waveforms; integer targets are converted to one-hot first."""
    lam = float(np.random.beta(alpha, alpha))
    perm = torch.randperm(wav.shape[0], device=wav.device)
    if target.dtype == torch.long:
        num_classes = int(target.max().item()) + 1
        target = torch.nn.functional.one_hot(target, num_classes=max(num_classes, 50)).float()
    wav = lam * wav + (1 - lam) * wav[perm]
    target = lam * target + (1 - lam) * target[perm]
    return wav, target
