"""Riiid! dataset: per-user sliding windows over the train.csv interaction log.

The raw csv is ~100M rows; we pre-group it once with pandas and pickle the
per-user arrays (see scripts/prepare_data.py), then window them here.
"""
import pickle
import random

import numpy as np
import torch
from torch.utils.data import Dataset

START_TOKEN = 2
PAD = 0


def load_groups(path):
    with open(path, "rb") as f:
        groups = pickle.load(f)
    # groups: user_id -> (content_id, part, answered_correctly, prior_elapsed, lag_minutes)
    return groups


class RiiidTrainDataset(Dataset):
    def __init__(self, groups, seq_len=100, min_len=5, sample_windows=True):
        self.seq_len = seq_len
        self.sample_windows = sample_windows
        self.users = []
        self.samples = {}
        for uid, arrays in groups.items():
            q = arrays[0]
            if len(q) < min_len:
                continue
            self.users.append(uid)
            self.samples[uid] = arrays

    def __len__(self):
        return len(self.users)

    def _window(self, n):
        if n <= self.seq_len:
            return 0, n
        if self.sample_windows:
            start = random.randint(0, n - self.seq_len)
        else:
            start = n - self.seq_len
        return start, start + self.seq_len

    def __getitem__(self, idx):
        uid = self.users[idx]
        q, part, ans, elapsed, lag = self.samples[uid]
        s, e = self._window(len(q))
        q, part, ans, elapsed, lag = q[s:e], part[s:e], ans[s:e], elapsed[s:e], lag[s:e]
        n = len(q)

        question_ids = np.zeros(self.seq_len, dtype=np.int64)
        part_ids = np.zeros(self.seq_len, dtype=np.int64)
        responses = np.zeros(self.seq_len, dtype=np.int64)
        labels = np.zeros(self.seq_len, dtype=np.float32)
        prior_elapsed = np.zeros(self.seq_len, dtype=np.float32)
        lag_minutes = np.zeros(self.seq_len, dtype=np.int64)
        label_mask = np.zeros(self.seq_len, dtype=bool)

        # left-pad so the latest interaction is always at position -1
        question_ids[-n:] = q
        part_ids[-n:] = part
        labels[-n:] = ans
        label_mask[-n:] = True
        prior_elapsed[-n:] = np.nan_to_num(elapsed, nan=0.0)
        lag_minutes[-n:] = lag

        # decoder sees the previous response; first step gets the start token
        responses[-n:] = np.concatenate([[START_TOKEN], ans[:-1]])

        return {
            "question_ids": torch.from_numpy(question_ids),
            "part_ids": torch.from_numpy(part_ids),
            "prior_responses": torch.from_numpy(responses),
            "prior_elapsed": torch.from_numpy(prior_elapsed),
            "lag_minutes": torch.from_numpy(lag_minutes),
            "labels": torch.from_numpy(labels),
            "label_mask": torch.from_numpy(label_mask),
        }


class RiiidValidDataset(RiiidTrainDataset):
    """Deterministic last-window split used for the leaderboard-like valid AUC."""

    def __init__(self, groups, seq_len=100, min_len=5):
        super().__init__(groups, seq_len=seq_len, min_len=min_len, sample_windows=False)


def split_users(groups, valid_frac=0.025, seed=0):
    rng = np.random.RandomState(seed)
    uids = np.array(sorted(groups.keys()))
    rng.shuffle(uids)
    n_valid = int(len(uids) * valid_frac)
    valid = set(uids[:n_valid].tolist())
    train_groups = {u: g for u, g in groups.items() if u not in valid}
    valid_groups = {u: g for u, g in groups.items() if u in valid}
    return train_groups, valid_groups


def collate(batch):
    out = {}
    for key in batch[0]:
        out[key] = torch.stack([b[key] for b in batch], dim=0)
    return out
