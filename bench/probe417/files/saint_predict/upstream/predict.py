"""Kaggle inference loop for the Riiid! time-series API.

Keeps a per-user history (last seq_len interactions) in host memory and
scores each test group with the trained SAINT+ model on the GPU.
"""
import argparse
import gc
from collections import defaultdict, deque

import numpy as np
import pandas as pd
import torch

from saint_plus.model import build_model

START_TOKEN = 2


class Args:
    """Model hyper-parameters; must match the training run (see train.py defaults)."""
    n_questions = 13523
    n_parts = 7
    seq_len = 100
    d_model = 256
    n_heads = 8
    n_layers = 2
    d_ff = 1024
    dropout = 0.0
    learned_pos = True


def load_model(ckpt_path):
    cfg = Args()
    model = build_model(cfg)
    state = torch.load(ckpt_path, map_location="cuda:0")
    model.load_state_dict(state["model"])
    model = model.cuda().eval()
    return model, cfg


class UserHistory:
    def __init__(self, seq_len):
        self.seq_len = seq_len
        self.q = defaultdict(lambda: deque(maxlen=seq_len))
        self.part = defaultdict(lambda: deque(maxlen=seq_len))
        self.ans = defaultdict(lambda: deque(maxlen=seq_len))
        self.elapsed = defaultdict(lambda: deque(maxlen=seq_len))
        self.lag = defaultdict(lambda: deque(maxlen=seq_len))
        self.last_ts = {}

    def build_batch(self, rows):
        L = self.seq_len
        B = len(rows)
        question_ids = np.zeros((B, L), dtype=np.int64)
        part_ids = np.zeros((B, L), dtype=np.int64)
        responses = np.zeros((B, L), dtype=np.int64)
        prior_elapsed = np.zeros((B, L), dtype=np.float32)
        lag_minutes = np.zeros((B, L), dtype=np.int64)
        for i, r in enumerate(rows):
            uid = r.user_id
            q = list(self.q[uid])[-(L - 1):] + [r.content_id]
            part = list(self.part[uid])[-(L - 1):] + [r.part]
            prev_ans = list(self.ans[uid])[-(L - 1):]
            el = list(self.elapsed[uid])[-(L - 1):] + [0.0 if np.isnan(r.prior_question_elapsed_time) else r.prior_question_elapsed_time / 1000.0]
            lag_now = 0 if uid not in self.last_ts else int((r.timestamp - self.last_ts[uid]) / 60000)
            lag = list(self.lag[uid])[-(L - 1):] + [lag_now]
            n = len(q)
            question_ids[i, -n:] = q
            part_ids[i, -n:] = part
            responses[i, -n:] = [START_TOKEN] + prev_ans if len(prev_ans) == n - 1 else ([START_TOKEN] + prev_ans)[-n:]
            prior_elapsed[i, -n:] = el
            lag_minutes[i, -n:] = lag
        return question_ids, part_ids, responses, prior_elapsed, lag_minutes

    def update(self, prev_rows, prev_answers):
        for r, a in zip(prev_rows, prev_answers):
            uid = r.user_id
            self.q[uid].append(r.content_id)
            self.part[uid].append(r.part)
            self.ans[uid].append(int(a))
            pet = r.prior_question_elapsed_time
            self.elapsed[uid].append(0.0 if np.isnan(pet) else pet / 1000.0)
            lag_now = 0 if uid not in self.last_ts else int((r.timestamp - self.last_ts[uid]) / 60000)
            self.lag[uid].append(lag_now)
            self.last_ts[uid] = r.timestamp


@torch.no_grad()
def predict_batch(model, arrays):
    tensors = [torch.from_numpy(a).cuda(non_blocking=True) for a in arrays]
    with torch.cuda.amp.autocast():
        logits = model(*tensors)
    return torch.sigmoid(logits[:, -1].float()).cpu().numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="checkpoints/best.pt")
    ap.add_argument("--questions", default="data/questions.csv")
    args = ap.parse_args()

    import riiideducation  # only importable inside the Kaggle kernel
    env = riiideducation.make_env()
    iter_test = env.iter_test()

    model, cfg = load_model(args.ckpt)
    questions = pd.read_csv(args.questions, usecols=["question_id", "part"]).set_index("question_id")
    history = UserHistory(cfg.seq_len)

    prev_rows = None
    for test_df, sample_prediction_df in iter_test:
        if prev_rows is not None:
            prev_answers = eval(test_df["prior_group_answers_correct"].iloc[0])
            mask = prev_rows.content_type_id.values == 0
            history.update(list(prev_rows[mask].itertuples()), np.array(prev_answers)[mask])

        test_df = test_df.join(questions, on="content_id")
        test_df["part"] = test_df["part"].fillna(1).astype(int)
        q_rows = test_df[test_df.content_type_id == 0]
        arrays = history.build_batch(list(q_rows.itertuples()))
        preds = predict_batch(model, arrays)

        test_df["answered_correctly"] = 0.5
        test_df.loc[test_df.content_type_id == 0, "answered_correctly"] = preds
        env.predict(test_df.loc[test_df.content_type_id == 0, ["row_id", "answered_correctly"]])
        prev_rows = test_df

        if len(history.last_ts) % 20000 == 0:
            gc.collect()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
