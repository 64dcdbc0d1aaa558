"""Hyper-parameter search for a tabular MLP with skorch + scikit-learn, trained on the GPU.

The MLP (with categorical embeddings) is wrapped in a skorch NeuralNetClassifier so that it
drops into a scikit-learn Pipeline / GridSearchCV like any other estimator.

    python examples/skorch_tabular_search.py --csv data/adult.csv --target income
"""
import argparse
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from accelerate import Accelerator
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder, StandardScaler
from skorch import NeuralNetClassifier
from skorch.callbacks import Checkpoint, EarlyStopping, EpochScoring, LRScheduler
from skorch.hf import AccelerateMixin

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class TabularMLP(nn.Module):
    def __init__(self, n_num=6, cat_cardinalities=(16, 8, 16, 7, 15, 6, 5, 2, 42), emb_dim=8,
                 hidden=256, depth=3, dropout=0.2, n_classes=2):
        super().__init__()
        self.n_num = n_num
        self.embs = nn.ModuleList([nn.Embedding(c + 1, emb_dim) for c in cat_cardinalities])
        d_in = n_num + emb_dim * len(cat_cardinalities)
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(dropout)]
            d_in = hidden
        self.mlp = nn.Sequential(*layers)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, X):
        x_num = X[:, : self.n_num]
        x_cat = X[:, self.n_num:].long().clamp_min(0)
        embs = [emb(x_cat[:, i]) for i, emb in enumerate(self.embs)]
        h = torch.cat([x_num] + embs, dim=1)
        return self.head(self.mlp(h))


class AcceleratedNet(AccelerateMixin, NeuralNetClassifier):
    """Mixed-precision variant; Accelerate places the module itself."""


def build_preprocessor(num_cols, cat_cols):
    return ColumnTransformer([
        ("num", StandardScaler(), num_cols),
        ("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1), cat_cols),
    ])


def cardinalities(df, cat_cols):
    return tuple(int(df[c].nunique()) for c in cat_cols)


def make_net(card, n_num, max_epochs):
    return NeuralNetClassifier(
        TabularMLP,
        module__n_num=n_num,
        module__cat_cardinalities=card,
        criterion=nn.CrossEntropyLoss,
        optimizer=torch.optim.AdamW,
        optimizer__weight_decay=1e-4,
        lr=1e-3,
        batch_size=1024,
        max_epochs=max_epochs,
        iterator_train__shuffle=True,
        iterator_train__num_workers=4,
        iterator_train__pin_memory=True,
        callbacks=[
            EpochScoring("roc_auc", lower_is_better=False, name="valid_auc"),
            EarlyStopping(monitor="valid_auc", lower_is_better=False, patience=8),
            LRScheduler(policy=torch.optim.lr_scheduler.CosineAnnealingLR, T_max=max_epochs),
        ],
        device=DEVICE,
        verbose=0,
    )


class Float32(object):
    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.asarray(X, dtype=np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--max-epochs", type=int, default=60)
    ap.add_argument("--fp16", action="store_true", help="refit the best config with Accelerate fp16")
    args = ap.parse_args()

    df = pd.read_csv(args.csv)
    y = (df.pop(args.target).astype(str).str.contains(">")).astype(np.int64).values
    cat_cols = [c for c in df.columns if df[c].dtype == object]
    num_cols = [c for c in df.columns if c not in cat_cols]
    X_tr, X_te, y_tr, y_te = train_test_split(df, y, test_size=0.2, stratify=y, random_state=0)

    card = cardinalities(df, cat_cols)
    pipe = Pipeline([
        ("prep", build_preprocessor(num_cols, cat_cols)),
        ("f32", Float32()),
        ("net", make_net(card, len(num_cols), args.max_epochs)),
    ])
    grid = {
        "net__lr": [3e-4, 1e-3, 3e-3],
        "net__module__hidden": [128, 256, 512],
        "net__module__depth": [2, 3],
        "net__module__dropout": [0.1, 0.3],
    }
    search = GridSearchCV(pipe, grid, scoring="roc_auc", cv=3, n_jobs=1, refit=True, verbose=2)
    t0 = time.time()
    search.fit(X_tr, y_tr)
    print(f"search took {time.time() - t0:.0f}s; best={search.best_score_:.4f} {search.best_params_}")

    best = search.best_estimator_
    proba = best.predict_proba(X_te)[:, 1]
    from sklearn.metrics import roc_auc_score

    print(f"test AUC {roc_auc_score(y_te, proba):.4f}")

    if args.fp16:
        params = {k.replace("net__", ""): v for k, v in search.best_params_.items()}
        acc_net = AcceleratedNet(
            TabularMLP,
            module__n_num=len(num_cols),
            module__cat_cardinalities=card,
            criterion=nn.CrossEntropyLoss,
            optimizer=torch.optim.AdamW,
            batch_size=1024,
            max_epochs=args.max_epochs,
            accelerator=Accelerator(mixed_precision="fp16"),
            device=None,
            **params,
        )
        prep = best.named_steps["prep"]
        Xp = np.asarray(prep.transform(X_tr), dtype=np.float32)
        acc_net.fit(Xp, y_tr)
        Xt = np.asarray(prep.transform(X_te), dtype=np.float32)
        print(f"fp16 test AUC {roc_auc_score(y_te, acc_net.predict_proba(Xt)[:, 1]):.4f}")

    # a small dedicated net for the calibration head, always on the first card
    calib = NeuralNetClassifier(
        nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 2)),
        criterion=nn.CrossEntropyLoss,
        lr=1e-2,
        max_epochs=30,
        batch_size=4096,
        train_split=None,
        device="cuda:0",
        verbose=0,
    )
    calib.fit(proba.reshape(-1, 1).astype(np.float32), y_te)
    print("calibrated head trained")
    best.named_steps["net"].set_params(device="cpu")
    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
