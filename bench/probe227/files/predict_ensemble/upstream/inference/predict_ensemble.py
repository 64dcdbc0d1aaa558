"""Final inference: level-1 test predictions + stacker MLP checkpoints -> submission.csv.

Runs inside the Kaggle inference notebook (GPU, internet off), so it only loads saved
artifacts: ``models/<name>/test.npy`` for the GBDTs/TabNet and the ``mlp_s*_f*.pt``
checkpoints of the stacker, which are re-run on the rank-gauss transformed test matrix.

    python inference/predict_ensemble.py --config configs/stack_mlp.yaml --out submission.csv
"""
from __future__ import annotations

import argparse
import glob
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from src.models.stack_mlp import StackConfig, StackMLP, load_level1  # noqa: E402

logger = logging.getLogger("predict")

DEVICE = "cuda:0"


def load_config(path):
    cfg = StackConfig()
    if path:
        with open(path) as f:
            for k, v in (yaml.safe_load(f) or {}).items():
                setattr(cfg, k, v)
    return cfg


def load_checkpoint(path: str, n_in: int, cfg: StackConfig) -> torch.nn.Module:
    model = StackMLP(n_in, cfg.hidden, cfg.dropout)
    state = torch.load(path, map_location=DEVICE)
    # checkpoints written from DDP runs carry a "module." prefix
    state = {k.replace("module.", "", 1): v for k, v in state.items()}
    model.load_state_dict(state)
    return model.cuda().eval().half()


@torch.inference_mode()
def predict_mlp(model: torch.nn.Module, x: np.ndarray, batch_size: int = 65536) -> np.ndarray:
    out = np.empty(len(x), dtype=np.float32)
    xt = torch.from_numpy(x).pin_memory()
    for i in range(0, len(x), batch_size):
        xb = xt[i:i + batch_size].cuda(non_blocking=True).half()
        out[i:i + batch_size] = torch.sigmoid(model(xb).float()).cpu().numpy()
    return out


def blend(preds: dict, weights: dict) -> np.ndarray:
    total = sum(weights.values())
    out = np.zeros_like(next(iter(preds.values())))
    for name, p in preds.items():
        out += weights.get(name, 0.0) * p
    return out / total


def rank_average(preds: list) -> np.ndarray:
    ranks = [pd.Series(p).rank(pct=True).values for p in preds]
    return np.mean(ranks, axis=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/stack_mlp.yaml")
    ap.add_argument("--ckpt-dir", default=None)
    ap.add_argument("--out", default="submission.csv")
    ap.add_argument("--blend-weight", type=float, default=0.7, help="weight of the stacker vs. rank-average")
    ap.add_argument("--cpu", action="store_true", help="run the MLP on CPU (debug)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    global DEVICE
    if args.cpu or not torch.cuda.is_available():
        DEVICE = "cpu"
    logger.info("device %s", DEVICE)

    cfg = load_config(args.config)
    ckpt_dir = Path(args.ckpt_dir or cfg.out_dir)
    x, _, x_test, test_ids = load_level1(cfg)
    logger.info("stack input %s -> test %s", x.shape, x_test.shape)

    ckpts = sorted(glob.glob(str(ckpt_dir / "mlp_s*_f*.pt")))
    if not ckpts:
        raise FileNotFoundError(f"no stacker checkpoints in {ckpt_dir}")

    t0 = time.time()
    preds = []
    for path in ckpts:
        model = load_checkpoint(path, x_test.shape[1], cfg)
        if DEVICE == "cpu":
            model = model.float().cpu()
            p = torch.sigmoid(model(torch.from_numpy(x_test))).detach().numpy()
        else:
            p = predict_mlp(model, x_test)
        preds.append(p)
        del model
    torch.cuda.synchronize()
    logger.info("%d checkpoints in %.1fs", len(ckpts), time.time() - t0)
    stack_pred = np.mean(preds, axis=0)

    level1 = [np.load(Path("models") / name / "test.npy") for name in cfg.level1]
    final = args.blend_weight * pd.Series(stack_pred).rank(pct=True).values + (1 - args.blend_weight) * rank_average(level1)

    sub = pd.DataFrame({"id": test_ids, "target": final})
    sub.to_csv(args.out, index=False)
    logger.info("wrote %s %s (mean %.4f)", args.out, sub.shape, sub.target.mean())
    if os.environ.get("KAGGLE_KERNEL_RUN_TYPE"):
        print(sub.head())


if __name__ == "__main__":
    main()
