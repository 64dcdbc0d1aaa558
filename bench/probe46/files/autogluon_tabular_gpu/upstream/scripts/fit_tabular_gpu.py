"""Fit an AutoGluon TabularPredictor (plus a MultiModal text column model) on the GPU box.

    python scripts/fit_tabular_gpu.py --train data/train.parquet --test data/test.parquet --label churned

The tree models are trained with their GPU builds, the neural nets (NN_TORCH, FASTAI) on the
visible GPU, and a MultiModalPredictor fine-tunes a small text backbone on the free-text column.
Everything is written under --out (AutoGluon saves its own artefacts there).
"""
import argparse
import json
import logging
import os
import time

import pandas as pd
import torch
from autogluon.common.utils.resource_utils import ResourceManager
from autogluon.multimodal import MultiModalPredictor
from autogluon.tabular import TabularDataset, TabularPredictor

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("fit_tabular_gpu")

TEXT_COLUMN = "support_ticket_text"


def tabular_hyperparameters(num_gpus: int):
    """Per-model hyperparameters; the GPU-specific knobs are spelled the way each library wants them."""
    return {
        "GBM": [
            {"device": "gpu", "max_bin": 63, "ag_args": {"name_suffix": "GPU"}},
            {"extra_trees": True, "ag_args": {"name_suffix": "XT"}},
        ],
        "CAT": {"task_type": "GPU", "border_count": 128},
        "XGB": {"tree_method": "gpu_hist", "predictor": "gpu_predictor"},
        "NN_TORCH": {"num_epochs": 50, "ag_args_fit": {"num_gpus": num_gpus}},
        "FASTAI": {"bs": 1024, "epochs": 30},
        "RF": [{"criterion": "gini"}, {"criterion": "entropy"}],
        "XT": [{"criterion": "gini"}],
    }


def fit_tabular(train_df, label, out_dir, time_limit, num_gpus):
    predictor = TabularPredictor(
        label=label,
        eval_metric="roc_auc",
        path=os.path.join(out_dir, "tabular"),
    )
    predictor.fit(
        train_data=train_df.drop(columns=[TEXT_COLUMN]),
        presets="best_quality",
        time_limit=time_limit,
        hyperparameters=tabular_hyperparameters(num_gpus),
        num_bag_folds=5,
        num_stack_levels=1,
        num_gpus=num_gpus,
        ag_args_fit={"num_gpus": num_gpus, "num_cpus": 8},
        verbosity=2,
    )
    return predictor


def fit_text(train_df, label, out_dir, time_limit):
    mm = MultiModalPredictor(
        label=label,
        problem_type="binary",
        eval_metric="roc_auc",
        path=os.path.join(out_dir, "text"),
    )
    mm.fit(
        train_data=train_df[[TEXT_COLUMN, label]],
        time_limit=time_limit,
        hyperparameters={
            "model.hf_text.checkpoint_name": "google/electra-small-discriminator",
            "env.num_gpus": 1,
            "env.precision": "16-mixed",
            "env.per_gpu_batch_size": 32,
            "optimization.max_epochs": 5,
            "optimization.efficient_finetune": "lora",
        },
    )
    return mm


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    parser.add_argument("--label", default="churned")
    parser.add_argument("--out", default="AutogluonModels/churn")
    parser.add_argument("--time-limit", type=int, default=3600)
    args = parser.parse_args()

    log.info("torch %s, cuda available: %s", torch.__version__, torch.cuda.is_available())
    num_gpus = ResourceManager.get_gpu_count()
    log.info("AutoGluon sees %d GPU(s)", num_gpus)
    if num_gpus == 0:
        raise SystemExit("no GPU visible - this script is meant for the GPU training box")

    train_df = TabularDataset(args.train)
    test_df = TabularDataset(args.test)
    log.info("train %s test %s", train_df.shape, test_df.shape)

    t0 = time.time()
    tab = fit_tabular(train_df, args.label, args.out, int(args.time_limit * 0.7), num_gpus)
    text = fit_text(train_df, args.label, args.out, int(args.time_limit * 0.3))
    log.info("fit done in %.0fs", time.time() - t0)

    lb = tab.leaderboard(test_df.drop(columns=[TEXT_COLUMN]), silent=True)
    print(lb[["model", "score_test", "score_val", "fit_time", "pred_time_test"]].head(15).to_string())

    p_tab = tab.predict_proba(test_df.drop(columns=[TEXT_COLUMN]))[1]
    p_text = text.predict_proba(test_df[[TEXT_COLUMN]])[1]
    blend = 0.8 * p_tab + 0.2 * p_text
    out = pd.DataFrame({"id": test_df.index, "p_tabular": p_tab, "p_text": p_text, "p_blend": blend})
    out.to_csv(os.path.join(args.out, "predictions.csv"), index=False)

    summary = {
        "best_model": tab.model_best,
        "num_gpus": num_gpus,
        "cuda_device": torch.cuda.get_device_name(0),
        "fit_seconds": round(time.time() - t0, 1),
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    log.info("wrote %s", os.path.join(args.out, "summary.json"))


if __name__ == "__main__":
    main()
