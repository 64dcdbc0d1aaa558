"""Level-1 stacking on RAPIDS cuML: SVC, KNN, logistic regression and a random forest,
all trained on GPU-resident cuDF frames, plus a UMAP embedding as extra meta-features.

    python pipelines/cuml_stack.py --train data/train.csv --test data/test.csv --folds 10

Port of the well-known "RAPIDS SVC + KNN" Kaggle kernels to a reusable script.
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

import cudf
import cupy as cp
import rmm
import cuml
from cuml.ensemble import RandomForestClassifier as cuRF
from cuml.linear_model import LogisticRegression
from cuml.manifold import UMAP
from cuml.neighbors import KNeighborsClassifier
from cuml.preprocessing import StandardScaler
from cuml.svm import SVC

# reserve most of the card up front: repeated fit/predict without a pool fragments device memory
rmm.reinitialize(pool_allocator=True, initial_pool_size=12 * 2 ** 30)
cuml.set_global_output_type("cupy")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--target", default="target")
    ap.add_argument("--id-col", default="id")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--umap-dim", type=int, default=8)
    ap.add_argument("--out", default="stack")
    return ap.parse_args()


def timer(name):
    class _T:
        def __enter__(self):
            self.t0 = time.time()

        def __exit__(self, *exc):
            print(f"[{name}] {time.time() - self.t0:.1f}s")

    return _T()


def base_models(seed):
    return {
        "svc": lambda: SVC(C=3.0, kernel="rbf", gamma="scale", probability=True, cache_size=4096),
        "knn": lambda: KNeighborsClassifier(n_neighbors=64),
        "logreg": lambda: LogisticRegression(C=0.5, max_iter=2000),
        "rf": lambda: cuRF(
            n_estimators=400,
            max_depth=16,
            max_features=0.5,
            n_bins=128,
            n_streams=4,
            random_state=seed,
        ),
    }


def to_host(a):
    if isinstance(a, cp.ndarray):
        return cp.asnumpy(a)
    if isinstance(a, (cudf.Series, cudf.DataFrame)):
        return a.to_pandas().values
    return np.asarray(a)


def umap_features(x_all, dim, seed):
    reducer = UMAP(n_components=dim, n_neighbors=30, min_dist=0.0, random_state=seed)
    emb = reducer.fit_transform(x_all)
    cols = [f"umap_{i}" for i in range(dim)]
    return cudf.DataFrame(emb, columns=cols)


def run(args):
    with timer("read"):
        train, test = (cudf.read_csv(p) for p in (args.train, args.test))
    y = train[args.target].astype("int32")
    feats = [c for c in train.columns if c not in (args.target, args.id_col)]
    print(f"train {train.shape} test {test.shape} features {len(feats)}")

    scaler = StandardScaler()
    x_all = cudf.concat([train[feats], test[feats]], ignore_index=True).astype("float32")
    x_all = cudf.DataFrame(scaler.fit_transform(x_all), columns=feats)

    with timer("umap"):
        emb = umap_features(x_all, args.umap_dim, args.seed)
    x_all = cudf.concat([x_all, emb], axis=1)
    n_train = len(train)
    x_tr = x_all.iloc[:n_train].reset_index(drop=True)
    x_te = x_all.iloc[n_train:].reset_index(drop=True)

    y_host = to_host(y)
    skf = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed)
    models = base_models(args.seed)
    oof = {name: np.zeros(n_train, dtype=np.float32) for name in models}
    pred = {name: np.zeros(len(x_te), dtype=np.float32) for name in models}

    for fold, (tr_idx, va_idx) in enumerate(skf.split(np.zeros(n_train), y_host)):
        xtr, xva = x_tr.iloc[tr_idx], x_tr.iloc[va_idx]
        ytr = y.iloc[tr_idx]
        for name, make in models.items():
            with timer(f"fold{fold}-{name}"):
                clf = make()
                clf.fit(xtr, ytr)
                oof[name][va_idx] = to_host(clf.predict_proba(xva)[:, 1])
                pred[name] += to_host(clf.predict_proba(x_te)[:, 1]) / args.folds
            del clf
        print(f"fold {fold}: " + ", ".join(
            f"{n}={roc_auc_score(y_host[va_idx], oof[n][va_idx]):.4f}" for n in models))
        cp.get_default_memory_pool().free_all_blocks()

    scores = {n: float(roc_auc_score(y_host, oof[n])) for n in models}
    print(json.dumps(scores, indent=1))

    os.makedirs(args.out, exist_ok=True)
    ids = test[args.id_col].to_pandas()
    oof_df = pd.DataFrame(oof)
    oof_df[args.target] = y_host
    oof_df.to_csv(os.path.join(args.out, "level1_oof.csv"), index=False)
    pred_df = pd.DataFrame(pred)
    pred_df.insert(0, args.id_col, ids.values)
    pred_df.to_csv(os.path.join(args.out, "level1_test.csv"), index=False)

    # simple level-2 blend: rank average weighted by CV AUC
    w = np.array([scores[n] for n in models])
    w = w / w.sum()
    ranks = np.stack([pd.Series(pred[n]).rank(pct=True).values for n in models], axis=1)
    blend = (ranks * w).sum(axis=1)
    sub = pd.DataFrame({args.id_col: ids.values, args.target: blend})
    sub.to_csv(os.path.join(args.out, "submission.csv"), index=False)
    with open(os.path.join(args.out, "scores.json"), "w") as f:
        json.dump(scores, f, indent=1)
    return scores


if __name__ == "__main__":
    run(parse_args())
