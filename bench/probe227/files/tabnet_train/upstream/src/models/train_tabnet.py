"""TabNet (pytorch-tabnet) k-fold training with optional self-supervised pretraining.

    python -m src.models.train_tabnet --features v3 --params configs/tabnet_params.json --pretrain

The hyper-parameters come from the JSON file (tuned with Optuna, see tune/optuna_mlp_multi_gpu.py);
command line flags override a few of them.
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from pytorch_tabnet.augmentations import ClassificationSMOTE
from pytorch_tabnet.metrics import Metric
from pytorch_tabnet.pretraining import TabNetPretrainer
from pytorch_tabnet.tab_model import TabNetClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import LabelEncoder

from src.utils import seed_everything, timer

logger = logging.getLogger(__name__)


class Gini(Metric):
    def __init__(self):
        self._name = "gini"
        self._maximize = True

    def __call__(self, y_true, y_score):
        auc = roc_auc_score(y_true, y_score[:, 1])
        return max(2 * auc - 1, 0.0)


def prepare(train: pd.DataFrame, test: pd.DataFrame, target: str = "target"):
    """Label-encode categoricals (TabNet wants contiguous ints) and fill NaNs."""
    feats = [c for c in test.columns if c not in ("id", target)]
    cat_idxs, cat_dims = [], []
    both = pd.concat([train[feats], test[feats]], axis=0, ignore_index=True)
    for i, c in enumerate(feats):
        if both[c].dtype == "object" or c.startswith("cat_"):
            le = LabelEncoder()
            both[c] = le.fit_transform(both[c].fillna("NA").astype(str))
            cat_idxs.append(i)
            cat_dims.append(len(le.classes_))
        else:
            both[c] = both[c].fillna(both[c].median()).astype(np.float32)
    x = both.iloc[: len(train)].values
    x_test = both.iloc[len(train):].values
    return x, x_test, train[target].values, feats, cat_idxs, cat_dims


def build_model(params, cat_idxs, cat_dims, device_name, seed):
    return TabNetClassifier(
        n_d=params["n_d"],
        n_a=params["n_a"],
        n_steps=params["n_steps"],
        gamma=params["gamma"],
        n_independent=params.get("n_independent", 2),
        n_shared=params.get("n_shared", 2),
        lambda_sparse=params["lambda_sparse"],
        cat_idxs=cat_idxs,
        cat_dims=cat_dims,
        cat_emb_dim=params.get("cat_emb_dim", 4),
        optimizer_fn=torch.optim.Adam,
        optimizer_params=dict(lr=params["lr"], weight_decay=params.get("weight_decay", 1e-5)),
        scheduler_fn=torch.optim.lr_scheduler.OneCycleLR,
        scheduler_params=dict(
            max_lr=params["lr"] * 5,
            steps_per_epoch=params["steps_per_epoch"],
            epochs=params["max_epochs"],
            is_batch_level=True,
        ),
        mask_type=params.get("mask_type", "entmax"),
        device_name=device_name,
        seed=seed,
        verbose=10,
    )


def pretrain(x, params, cat_idxs, cat_dims, device_name, out_dir, seed):
    pre = TabNetPretrainer(
        n_d=params["n_d"],
        n_a=params["n_a"],
        n_steps=params["n_steps"],
        cat_idxs=cat_idxs,
        cat_dims=cat_dims,
        optimizer_fn=torch.optim.Adam,
        optimizer_params=dict(lr=2e-2),
        mask_type=params.get("mask_type", "entmax"),
        device_name=device_name,
        seed=seed,
    )
    with timer("tabnet pretraining"):
        pre.fit(
            X_train=x,
            eval_set=[x[: min(len(x), 50000)]],
            max_epochs=params.get("pretrain_epochs", 50),
            patience=10,
            batch_size=params["batch_size"],
            virtual_batch_size=params["virtual_batch_size"],
            num_workers=0,
            drop_last=False,
            pretraining_ratio=0.8,
        )
    pre.save_model(str(out_dir / "pretrainer"))
    return pre


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--features", default="v3")
    p.add_argument("--params", default="configs/tabnet_params.json")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--pretrain", action="store_true")
    p.add_argument("--smote", action="store_true", help="use the GPU SMOTE-like mixup augmentation")
    p.add_argument("--device", default=None, help="override device_name from the params file")
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    seed_everything(args.seed)
    with open(args.params) as f:
        params = json.load(f)
    device_name = args.device or params.pop("device_name", "cuda")

    root = Path("features") / args.features
    train = pd.read_parquet(root / "train.parquet")
    test = pd.read_parquet(root / "test.parquet")
    x, x_test, y, feats, cat_idxs, cat_dims = prepare(train, test)
    params["steps_per_epoch"] = int(np.ceil(len(x) * (args.folds - 1) / args.folds / params["batch_size"]))
    logger.info("x %s, %d categorical, device %s", x.shape, len(cat_idxs), device_name)

    out_dir = Path("models") / f"tabnet_{args.features}"
    out_dir.mkdir(parents=True, exist_ok=True)
    pre = pretrain(x, params, cat_idxs, cat_dims, device_name, out_dir, args.seed) if args.pretrain else None

    aug = ClassificationSMOTE(p=0.2, device_name="cuda") if args.smote else None

    oof = np.zeros(len(x))
    pred = np.zeros(len(x_test))
    skf = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed)
    for fold, (tr, va) in enumerate(skf.split(x, y)):
        clf = build_model(params, cat_idxs, cat_dims, device_name, args.seed + fold)
        with timer(f"tabnet fold {fold}"):
            clf.fit(
                X_train=x[tr],
                y_train=y[tr],
                eval_set=[(x[va], y[va])],
                eval_name=["valid"],
                eval_metric=["auc", Gini],
                max_epochs=params["max_epochs"],
                patience=params.get("patience", 20),
                batch_size=params["batch_size"],
                virtual_batch_size=params["virtual_batch_size"],
                num_workers=0,
                drop_last=True,
                augmentations=aug,
                from_unsupervised=pre,
            )
        oof[va] = clf.predict_proba(x[va])[:, 1]
        pred += clf.predict_proba(x_test)[:, 1] / args.folds
        clf.save_model(str(out_dir / f"fold{fold}"))
        fi = pd.DataFrame({"feature": feats, "importance": clf.feature_importances_})
        fi.to_csv(out_dir / f"importance_fold{fold}.csv", index=False)
        logger.info("fold %d auc %.5f", fold, roc_auc_score(y[va], oof[va]))
        del clf
        gc.collect()
        torch.cuda.empty_cache()

    score = roc_auc_score(y, oof)
    logger.info("TabNet CV AUC %.5f", score)
    np.save(out_dir / "oof.npy", oof)
    np.save(out_dir / "test.npy", pred)
    with open(out_dir / "score.json", "w") as f:
        json.dump({"auc": score, "params": params, "device": device_name}, f, indent=2)
    if os.environ.get("SAVE_MASKS"):
        clf0 = TabNetClassifier()
        clf0.load_model(str(out_dir / "fold0.zip"))
        explain, masks = clf0.explain(x_test[:1000])
        np.save(out_dir / "explain_test.npy", explain)
        logger.info("saved %d attention masks", len(masks))


if __name__ == "__main__":
    main()
