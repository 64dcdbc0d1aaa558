"""Self-supervised TabNet pre-training followed by supervised fine-tuning (census-income example).

    python scripts/pretrain_tabnet.py --data data/census-income.csv --max-epochs 200
"""
import argparse
import os
import random

import numpy as np
import pandas as pd
import torch
from pytorch_tabnet.metrics import Metric
from pytorch_tabnet.pretraining import TabNetPretrainer
from pytorch_tabnet.tab_model import TabNetClassifier, TabNetRegressor
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import LabelEncoder

SEED = 0
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TARGET = "income"


class Gini(Metric):
    def __init__(self):
        self._name = "gini"
        self._maximize = True

    def __call__(self, y_true, y_score):
        auc = roc_auc_score(y_true, y_score[:, 1])
        return max(2 * auc - 1, 0.0)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


def load(path):
    df = pd.read_csv(path)
    rng = np.random.RandomState(SEED)
    df["Set"] = rng.choice(["train", "valid", "test"], p=[0.8, 0.1, 0.1], size=(df.shape[0],))
    nunique = df.nunique()
    types = df.dtypes
    cat_idxs, cat_dims = [], []
    features = [c for c in df.columns if c not in (TARGET, "Set")]
    for i, col in enumerate(features):
        if types[col] == "object" or nunique[col] < 200:
            enc = LabelEncoder()
            df[col] = enc.fit_transform(df[col].fillna("VV_likely").astype(str))
            cat_idxs.append(i)
            cat_dims.append(len(enc.classes_))
        else:
            df[col] = df[col].fillna(df.loc[df.Set == "train", col].mean())
    df[TARGET] = LabelEncoder().fit_transform(df[TARGET].astype(str))
    return df, features, cat_idxs, cat_dims


def split(df, features):
    out = {}
    for s in ("train", "valid", "test"):
        part = df[df.Set == s]
        out[s] = (part[features].values.astype(np.float32), part[TARGET].values)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--max-epochs", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--virtual-batch-size", type=int, default=128)
    ap.add_argument("--out", default="artifacts/tabnet")
    args = ap.parse_args()
    seed_everything(SEED)
    if DEVICE == "cuda":
        print(f"training on {torch.cuda.get_device_name(0)}")

    df, features, cat_idxs, cat_dims = load(args.data)
    data = split(df, features)
    X_train, y_train = data["train"]
    X_valid, y_valid = data["valid"]
    X_test, y_test = data["test"]

    common = dict(
        cat_idxs=cat_idxs,
        cat_dims=cat_dims,
        cat_emb_dim=3,
        optimizer_fn=torch.optim.Adam,
        optimizer_params=dict(lr=2e-2),
        mask_type="entmax",
    )

    pretrainer = TabNetPretrainer(
        **common,
        scheduler_params={"step_size": 10, "gamma": 0.9},
        scheduler_fn=torch.optim.lr_scheduler.StepLR,
        n_shared_decoder=1,
        n_indep_decoder=1,
        device_name=DEVICE,
    )
    pretrainer.fit(
        X_train=X_train,
        eval_set=[X_valid],
        max_epochs=args.max_epochs,
        patience=10,
        batch_size=args.batch_size,
        virtual_batch_size=args.virtual_batch_size,
        num_workers=4,
        drop_last=False,
        pretraining_ratio=0.8,
        pin_memory=True,
    )
    os.makedirs(args.out, exist_ok=True)
    pretrainer.save_model(os.path.join(args.out, "pretrainer"))

    clf = TabNetClassifier(
        **common,
        scheduler_params={"step_size": 10, "gamma": 0.9},
        scheduler_fn=torch.optim.lr_scheduler.StepLR,
        device_name=DEVICE,
    )
    clf.fit(
        X_train=X_train,
        y_train=y_train,
        eval_set=[(X_train, y_train), (X_valid, y_valid)],
        eval_name=["train", "valid"],
        eval_metric=["auc", Gini],
        max_epochs=args.max_epochs,
        patience=20,
        batch_size=args.batch_size,
        virtual_batch_size=args.virtual_batch_size,
        num_workers=4,
        weights=1,
        drop_last=False,
        from_unsupervised=pretrainer,
    )
    preds = clf.predict_proba(X_test)
    print(f"test AUC {roc_auc_score(y_test, preds[:, 1]):.5f}")
    clf.save_model(os.path.join(args.out, "classifier"))

    # auxiliary regressor on the capital-gain column, reused by the downstream ranker
    reg = TabNetRegressor(
        cat_idxs=cat_idxs,
        cat_dims=cat_dims,
        cat_emb_dim=1,
        n_d=16,
        n_a=16,
        device_name="cuda",
    )
    gain_col = features.index("capital gains") if "capital gains" in features else 0
    y_reg = X_train[:, gain_col:gain_col + 1]
    reg.fit(X_train=X_train, y_train=y_reg, eval_set=[(X_valid, X_valid[:, gain_col:gain_col + 1])],
            max_epochs=50, patience=5, batch_size=args.batch_size,
            virtual_batch_size=args.virtual_batch_size)
    reg.save_model(os.path.join(args.out, "aux_regressor"))

    importances = pd.Series(clf.feature_importances_, index=features).sort_values(ascending=False)
    importances.to_csv(os.path.join(args.out, "feature_importances.csv"))
    print(importances.head(15))


if __name__ == "__main__":
    main()
