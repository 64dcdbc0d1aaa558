"""Noisy-label detection benchmark with OpenDataVal.

Evaluates a panel of data valuation methods on a tabular / embedding dataset
with 10% flipped labels and reports how well each one ranks the corrupted
points at the bottom (noisy_detection) and how accuracy degrades when the
highest-valued points are removed (remove_high_low).

    python benchmark_noisy_labels.py --dataset bbc-embeddings --gpu 0
"""
import argparse
import os
from pathlib import Path

import pandas as pd
import torch

from opendataval.dataloader import DataFetcher, mix_labels
from opendataval.dataval import (
    AME,
    DVRL,
    BetaShapley,
    DataBanzhaf,
    DataOob,
    DataShapley,
    InfluenceSubsample,
    KNNShapley,
    LavaEvaluator,
    LeaveOneOut,
    RandomEvaluator,
)
from opendataval.experiment import ExperimentMediator
from opendataval.experiment.exper_methods import (
    discover_corrupted_sample,
    noisy_detection,
    remove_high_low,
)
from opendataval.model import ModelFactory


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="bbc-embeddings")
    p.add_argument("--train-count", type=int, default=1000)
    p.add_argument("--valid-count", type=int, default=200)
    p.add_argument("--test-count", type=int, default=500)
    p.add_argument("--noise-rate", type=float, default=0.1)
    p.add_argument("--model", default="LogisticRegression",
                   choices=["LogisticRegression", "ClassifierMLP", "sklearn.LogisticRegression"])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--num-models", type=int, default=1000)
    p.add_argument("--gpu", type=str, default="0", help="GPU index; '' for CPU")
    p.add_argument("--seed", type=int, default=10)
    p.add_argument("--out", default="results/noisy_labels")
    return p.parse_args()


def main():
    args = parse_args()
    if args.gpu != "":
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    device = torch.device("cuda" if torch.cuda.is_available() and args.gpu != "" else "cpu")
    torch.manual_seed(args.seed)
    print(f"[opendataval] running on {device}")

    fetcher = DataFetcher.setup(
        dataset_name=args.dataset,
        cache_dir="data_files/",
        force_download=False,
        random_state=args.seed,
        train_count=args.train_count,
        valid_count=args.valid_count,
        test_count=args.test_count,
        add_noise=mix_labels,
        noise_kwargs={"noise_rate": args.noise_rate},
    )

    pred_model = ModelFactory(
        model_name=args.model,
        fetcher=fetcher,
        device=device,
    )
    train_kwargs = {"epochs": args.epochs, "batch_size": args.batch_size}

    exper_med = ExperimentMediator(
        fetcher=fetcher,
        pred_model=pred_model,
        train_kwargs=train_kwargs,
        metric_name="accuracy",
    )

    n = args.num_models
    data_evaluators = [
        RandomEvaluator(),
        LeaveOneOut(),
        InfluenceSubsample(num_models=n),
        KNNShapley(k_neighbors=args.valid_count),
        DataOob(num_models=n),
        DataBanzhaf(num_models=n),
        BetaShapley(gr_threshold=1.05, max_mc_epochs=300, min_models=500),
        DataShapley(gr_threshold=1.05, max_mc_epochs=300, min_models=500),
        AME(num_models=n),
        DVRL(rl_epochs=2000, device=device),
        LavaEvaluator(device=device),
    ]
    exper_med = exper_med.compute_data_values(data_evaluators=data_evaluators)

    out = Path(args.out) / args.dataset
    out.mkdir(parents=True, exist_ok=True)
    df_noisy = exper_med.evaluate(noisy_detection, save_output=str(out / "noisy_detection.csv"))
    df_rm = exper_med.evaluate(remove_high_low, save_output=str(out / "remove_high_low.csv"))
    df_disc = exper_med.evaluate(discover_corrupted_sample, save_output=str(out / "discover.csv"))
    summary = pd.concat([df_noisy, df_rm.groupby(level=0).mean()], axis=1)
    print(summary)
    summary.to_csv(out / "summary.csv")
    if device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
