"""Level-1 stack: XGBoost + LightGBM on GPU next to a PyTorch MLP, blended by a ridge meta-model.

    python src/train_stack.py --train data/train.parquet --folds 5
"""
import argparse
import gc
import json

import lightgbm as lgb
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import xgboost as xgb
from sklearn.linear_model import Ridge
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

XGB_PARAMS = dict(
    n_estimators=4000,
    learning_rate=0.03,
    max_depth=8,
    subsample=0.8,
    colsample_bytree=0.6,
    tree_method="gpu_hist",
    predictor="gpu_predictor",
    gpu_id=0,
    eval_metric="auc",
    early_stopping_rounds=200,
)

LGB_PARAMS = dict(
    n_estimators=4000,
    learning_rate=0.03,
    num_leaves=127,
    feature_fraction=0.6,
    bagging_fraction=0.8,
    bagging_freq=1,
    device="gpu",
    gpu_platform_id=0,
    gpu_device_id=0,
    max_bin=63,
    verbose=-1,
)


class MLP(nn.Module):
    def __init__(self, d_in, hidden=512, p=0.2):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.SiLU(), nn.Dropout(p),
            nn.Linear(hidden, hidden // 2), nn.BatchNorm1d(hidden // 2), nn.SiLU(), nn.Dropout(p),
            nn.Linear(hidden // 2, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


def fit_mlp(xtr, ytr, xva, yva, epochs=20, bs=4096, lr=2e-3):
    model = MLP(xtr.shape[1]).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-5)
    scaler = torch.cuda.amp.GradScaler()
    xtr_t = torch.tensor(xtr, dtype=torch.float32).pin_memory()
    ytr_t = torch.tensor(ytr, dtype=torch.float32).pin_memory()
    xva_t = torch.tensor(xva, dtype=torch.float32, device=DEVICE)
    loss_fn = nn.BCEWithLogitsLoss()
    best, best_pred = -1.0, None
    for ep in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr_t))
        for i in range(0, len(perm), bs):
            idx = perm[i : i + bs]
            xb = xtr_t[idx].to(DEVICE, non_blocking=True)
            yb = ytr_t[idx].to(DEVICE, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast():
                loss = loss_fn(model(xb), yb)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        model.eval()
        with torch.no_grad(), torch.cuda.amp.autocast():
            pred = torch.sigmoid(model(xva_t)).float().cpu().numpy()
        auc = roc_auc_score(yva, pred)
        if auc > best:
            best, best_pred = auc, pred
    del model
    torch.cuda.empty_cache()
    return best_pred


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/train.parquet")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    df = pd.read_parquet(args.train)
    y = df.pop("target").values
    X = df.values.astype(np.float32)
    oof = np.zeros((len(df), 3))

    skf = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed)
    for fold, (tr, va) in enumerate(skf.split(X, y)):
        xgb_model = xgb.XGBClassifier(**XGB_PARAMS)
        xgb_model.fit(X[tr], y[tr], eval_set=[(X[va], y[va])], verbose=500)
        oof[va, 0] = xgb_model.predict_proba(X[va])[:, 1]

        lgb_model = lgb.LGBMClassifier(**LGB_PARAMS)
        lgb_model.fit(X[tr], y[tr], eval_set=[(X[va], y[va])], callbacks=[lgb.early_stopping(200), lgb.log_evaluation(500)])
        oof[va, 1] = lgb_model.predict_proba(X[va])[:, 1]

        oof[va, 2] = fit_mlp(X[tr], y[tr], X[va], y[va])
        print(f"fold {fold}: " + " ".join(f"{n}={roc_auc_score(y[va], oof[va, i]):.5f}" for i, n in enumerate(["xgb", "lgb", "mlp"])))
        gc.collect()

    meta = Ridge(alpha=1.0).fit(oof, y)
    blend = meta.predict(oof)
    print(f"stack AUC {roc_auc_score(y, blend):.5f}  weights {meta.coef_.round(3).tolist()}")
    with open("stack_weights.json", "w") as f:
        json.dump({"coef": meta.coef_.tolist(), "intercept": float(meta.intercept_)}, f)


if __name__ == "__main__":
    main()
