"""IEMOCAP feature loading for the emotion2vec downstream recipe.

Features come from ``scripts/extract_features.py``: one big ``<prefix>.npy``
(utterance level) or a ``<prefix>_frames/`` directory, plus ``<prefix>.lengths``
and ``<prefix>.emo`` (``<utt_id>\t<label>`` per line).
"""
import logging
import os

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Subset

logger = logging.getLogger(__name__)

SESSION_SIZES = [1085, 1023, 1151, 1031, 1241]  # 5531 utterances after 4-class filtering


def load_ssl_features(feature_path, label_dict, max_speech_seq_len=None):
    data = np.load(feature_path + ".npy", mmap_mode="r")
    with open(feature_path + ".lengths", "r") as f:
        lengths = [int(line.strip()) for line in f]
    with open(feature_path + ".emo", "r") as f:
        lines = [line.strip().split("\t") for line in f if line.strip()]
    utt_ids = [x[0] for x in lines]
    labels = [label_dict[x[1]] for x in lines]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).tolist()

    bounds, start = [], 0
    for n in SESSION_SIZES:
        bounds.append((start, start + n))
        start += n
    if start != len(labels):
        logger.warning(f"session sizes sum to {start} but {len(labels)} labels were read")

    return {
        "feats": data,
        "sizes": lengths,
        "offsets": offsets,
        "labels": labels,
        "utt_ids": utt_ids,
        "session_bounds": bounds,
        "max_len": max_speech_seq_len,
    }


class SpeechDataset(Dataset):
    def __init__(self, feats, sizes, offsets, labels, max_len=None, shuffle=True):
        super().__init__()
        self.feats = feats
        self.sizes = sizes
        self.offsets = offsets
        self.labels = labels
        self.max_len = max_len
        self.shuffle = shuffle

    def __len__(self):
        return len(self.sizes)

    def __getitem__(self, index):
        offset = self.offsets[index]
        end = offset + self.sizes[index]
        feats = torch.from_numpy(np.array(self.feats[offset:end], dtype=np.float32))
        if self.max_len is not None and feats.size(0) > self.max_len:
            feats = feats[: self.max_len]
        return {"id": index, "feats": feats, "target": self.labels[index]}

    def collator(self, samples):
        if len(samples) == 0:
            return {}
        feats = [s["feats"] for s in samples]
        sizes = [f.size(0) for f in feats]
        target_size = max(sizes)
        collated = feats[0].new_zeros(len(feats), target_size, feats[0].size(-1))
        padding_mask = torch.zeros(len(feats), target_size, dtype=torch.bool)
        for i, (f, n) in enumerate(zip(feats, sizes)):
            collated[i, :n] = f
            padding_mask[i, n:] = True
        return {
            "id": torch.LongTensor([s["id"] for s in samples]),
            "net_input": {"feats": collated, "padding_mask": padding_mask},
            "labels": torch.LongTensor([s["target"] for s in samples]),
        }


def train_valid_test_iemocap_dataloader(
    data, batch_size, test_start, test_end, eval_is_test=False, num_workers=4
):
    full = SpeechDataset(data["feats"], data["sizes"], data["offsets"], data["labels"], max_len=data["max_len"])
    all_idx = list(range(len(full)))
    test_idx = all_idx[test_start:test_end]
    rest = all_idx[:test_start] + all_idx[test_end:]
    if eval_is_test:
        train_idx, val_idx = rest, test_idx
    else:
        rng = np.random.RandomState(1234)
        perm = rng.permutation(len(rest)).tolist()
        n_val = len(rest) // 10
        val_idx = [rest[i] for i in perm[:n_val]]
        train_idx = [rest[i] for i in perm[n_val:]]

    use_pin = torch.cuda.is_available()
    train_loader = DataLoader(
        Subset(full, train_idx),
        batch_size=batch_size,
        shuffle=True,
        collate_fn=full.collator,
        num_workers=num_workers,
        pin_memory=use_pin,
        drop_last=False,
    )
    val_loader = DataLoader(
        Subset(full, val_idx),
        batch_size=batch_size,
        shuffle=False,
        collate_fn=full.collator,
        num_workers=num_workers,
        pin_memory=use_pin,
    )
    test_loader = DataLoader(
        Subset(full, test_idx),
        batch_size=batch_size,
        shuffle=False,
        collate_fn=full.collator,
        num_workers=num_workers,
    )
    logger.info(f"train {len(train_idx)} / valid {len(val_idx)} / test {len(test_idx)} utterances")
    return train_loader, val_loader, test_loader


def dump_split(path, data, indices):
    """Write the utterance ids of a split so runs can be compared."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        for i in indices:
            f.write(f"{data['utt_ids'][i]}\t{data['labels'][i]}\n")
