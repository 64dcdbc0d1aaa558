import argparse
import datetime
import json
import os
import time

import numpy as np
import pandas as pd
import torch
from datasets import Dataset, logging as datasets_logging
from sklearn import metrics

from binoculars import Binoculars

torch.set_grad_enabled(False)
torch.backends.cuda.matmul.allow_tf32 = True
datasets_logging.disable_progress_bar()


def convert_to_pandas(human_scores, machine_scores):
    human_pred = ["human" for _ in range(len(human_scores))]
    machine_pred = ["machine" for _ in range(len(machine_scores))]
    df = pd.DataFrame({"score": human_scores + machine_scores, "class": human_pred + machine_pred})
    return df


def save_experiment(args, score_df, fpr, tpr, f1_score, roc_auc, tpr_at_fpr_0_01, runtime):
    # Save experiment results
    os.makedirs(args.experiment_path, exist_ok=True)
    score_df.to_csv(os.path.join(args.experiment_path, "score_df.csv"), index=False)
    with open(os.path.join(args.experiment_path, "performance.json"), "w") as f:
        json.dump({
            "f1_score": f1_score,
            "roc_auc": roc_auc,
            "tpr_at_fpr_0_01": tpr_at_fpr_0_01,
            "runtime_sec": runtime,
        }, f, indent=4)
    with open(os.path.join(args.experiment_path, "args.json"), "w") as f:
        json.dump(vars(args), f, indent=4)
    np.save(os.path.join(args.experiment_path, "fpr.npy"), fpr)
    np.save(os.path.join(args.experiment_path, "tpr.npy"), tpr)


def main(args):
    # Initialize Binoculars (experiments in paper use the "accuracy" mode threshold wherever applicable)
    bino = Binoculars(observer_name_or_path=args.observer,
                      performer_name_or_path=args.performer,
                      mode="accuracy",
                      max_token_observed=args.tokens_seen)

    # Load dataset
    ds = Dataset.from_json(f"{args.dataset_path}")

    # Set job name
    args.job_name = args.job_name if args.job_name else os.path.basename(args.dataset_path).split(".")[0]
    args.experiment_path = f"results/{args.job_name}"

    # Score all human and machine texts
    print(f"Scoring human text using {torch.cuda.device_count()} GPUs")
    start = time.time()
    human_scores = ds.map(lambda batch: {"score": bino.compute_score(batch[args.human_sample_key])},
                          batched=True,
                          batch_size=args.batch_size,
                          remove_columns=ds.column_names)

    print(f"Scoring machine text")
    machine_scores = ds.map(lambda batch: {"score": bino.compute_score(batch[args.machine_sample_key])},
                            batched=True,
                            batch_size=args.batch_size,
                            remove_columns=ds.column_names)
    runtime = time.time() - start

    score_df = convert_to_pandas(human_scores["score"], machine_scores["score"])
    score_df["pred"] = np.where(score_df["score"] < bino.threshold, 1, 0)

    # Compute metrics
    f1_score = metrics.f1_score(score_df["class"] == "machine", score_df["pred"] == 1)
    score = -1 * score_df["score"]  # We negative scores because, binoculars scores are low for machine text
    fpr, tpr, thresholds = metrics.roc_curve(y_true=score_df["class"] == "machine", y_score=score, pos_label=True)
    roc_auc = metrics.auc(fpr, tpr)
    # Interpolate to get TPR at FPR of 0.01%
    tpr_at_fpr_0_01 = np.interp(0.01 / 100, fpr, tpr)

    print(f"F1 Score: {f1_score:.4f}, ROC AUC: {roc_auc:.4f}, TPR@0.01%FPR: {tpr_at_fpr_0_01:.4f} ({runtime:.0f}s)")

    # Save experiment
    save_experiment(args, score_df, fpr, tpr, f1_score, roc_auc, tpr_at_fpr_0_01, runtime)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset_path", type=str, required=True)
    parser.add_argument("--observer", type=str, default="tiiuae/falcon-7b")
    parser.add_argument("--performer", type=str, default="tiiuae/falcon-7b-instruct")
    parser.add_argument("--tokens_seen", type=int, default=512)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--human_sample_key", type=str, default="text")
    parser.add_argument("--machine_sample_key", type=str, default=None)
    parser.add_argument("--machine_text_source", type=str, default=None)
    parser.add_argument("--job_name", type=str, default=None)

    args = parser.parse_args()

    print("Using device:", "cuda" if torch.cuda.is_available() else "cpu")

    if args.machine_sample_key is None:
        args.machine_sample_key = f"{args.machine_text_source}_generated_text_wo_prompt"

    print(f"Starting experiment {args.job_name} at {datetime.datetime.now().strftime('%Y-%m-%d %H:%M:%S')}")
    main(args)
