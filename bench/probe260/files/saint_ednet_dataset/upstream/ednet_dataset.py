"""EdNet-KT1 / Riiid sequences for SAINT+.

The raw train.csv (100M rows) is grouped per user once and cached as a pickle of numpy arrays.
RAPIDS cuDF is used for the group-by when it is installed (GPU box), pandas otherwise.
"""
import os
import pickle

import numpy as np
import torch
from torch.utils.data import Dataset

try:  # optional GPU dataframe backend, ~20x faster group-by on the 100M-row csv
    import cudf as xdf
    GPU_DF = True
except ImportError:
    import pandas as xdf
    GPU_DF = False

DTYPES = {
    "timestamp": "int64",
    "user_id": "int32",
    "content_id": "int16",
    "content_type_id": "int8",
    "task_container_id": "int16",
    "answered_correctly": "int8",
    "prior_question_elapsed_time": "float32",
}


def build_user_sequences(csv_path, questions_path, out_path):
    """Group interactions per user: (exercise, part, correct, elapsed, lag) arrays sorted by time."""
    df = xdf.read_csv(csv_path, dtype=DTYPES, usecols=list(DTYPES.keys()))
    df = df[df.content_type_id == 0]  # questions only, drop lectures
    questions = xdf.read_csv(questions_path)[["question_id", "part"]]
    df = df.merge(questions, left_on="content_id", right_on="question_id", how="left")
    df = df.sort_values(["user_id", "timestamp"])
    df["lag"] = df.groupby("user_id")["timestamp"].diff().fillna(0) / 1000.0
    df["prior_question_elapsed_time"] = df["prior_question_elapsed_time"].fillna(0) / 1000.0
    if GPU_DF:
        df = df.to_pandas()  # back to host memory for the python loop below
    groups = {}
    for uid, g in df.groupby("user_id"):
        groups[int(uid)] = (
            g["content_id"].values.astype(np.int32) + 1,  # 0 is padding
            g["part"].values.astype(np.int8),
            g["answered_correctly"].values.astype(np.int8),
            g["prior_question_elapsed_time"].values.astype(np.float32),
            g["lag"].values.astype(np.float32),
        )
    with open(out_path, "wb") as f:
        pickle.dump(groups, f, protocol=4)
    return groups


class EdNetDataset(Dataset):
    def __init__(self, path, max_seq=100, n_skill=13523, min_len=2):
        with open(path, "rb") as f:
            groups = pickle.load(f)
        self.max_seq = max_seq
        self.n_skill = n_skill
        self.samples = []
        # cut long histories into windows of max_seq, keep short users as one padded window
        for uid, (ex, part, correct, elapsed, lag) in groups.items():
            n = len(ex)
            if n < min_len:
                continue
            if n <= max_seq:
                self.samples.append((ex, part, correct, elapsed, lag))
            else:
                for start in range(0, n, max_seq):
                    end = min(start + max_seq, n)
                    if end - start < min_len:
                        continue
                    self.samples.append((ex[start:end], part[start:end], correct[start:end],
                                         elapsed[start:end], lag[start:end]))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        ex, part, correct, elapsed, lag = self.samples[idx]
        n = len(ex)
        pad = self.max_seq - n
        item = {
            "exercise": np.pad(ex, (pad, 0)),
            "part": np.pad(part, (pad, 0)),
            "response": np.pad(correct, (pad, 0)),
            "answered_correctly": np.pad(correct, (pad, 0)),
            "elapsed": np.pad(elapsed, (pad, 0)),
            "lag": np.pad(lag, (pad, 0)),
            "label_mask": np.pad(np.ones(n, dtype=bool), (pad, 0)),
        }
        return item


def collate_fn(batch):
    """Stack a list of dict samples into CPU tensors (moved to the GPU in the training loop)."""
    out = {}
    for key in batch[0]:
        arr = np.stack([b[key] for b in batch])
        if key in ("elapsed", "lag"):
            out[key] = torch.from_numpy(arr).float()
        elif key == "label_mask":
            out[key] = torch.from_numpy(arr).bool()
        else:
            out[key] = torch.from_numpy(arr.astype(np.int64))
    return out


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", default="data/riiid/train.csv")
    parser.add_argument("--questions", default="data/riiid/questions.csv")
    parser.add_argument("--out_dir", default="data/ednet")
    parser.add_argument("--valid_ratio", type=float, default=0.05)
    args = parser.parse_args()

    os.makedirs(args.out_dir, exist_ok=True)
    print(f"grouping with {'cuDF (GPU)' if GPU_DF else 'pandas (CPU)'}")
    groups = build_user_sequences(args.csv, args.questions, os.path.join(args.out_dir, "all_seqs.pkl"))
    users = sorted(groups.keys())
    rng = np.random.RandomState(0)
    rng.shuffle(users)
    n_valid = int(len(users) * args.valid_ratio)
    valid_users = set(users[:n_valid])
    train = {u: groups[u] for u in users if u not in valid_users}
    valid = {u: groups[u] for u in valid_users}
    for name, part in [("train_seqs.pkl", train), ("valid_seqs.pkl", valid)]:
        with open(os.path.join(args.out_dir, name), "wb") as f:
            pickle.dump(part, f, protocol=4)
    print(f"train users {len(train)}, valid users {len(valid)}")
