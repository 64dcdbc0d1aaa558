"""Backtest a trained DeepAR against zero-shot Moirai on a GluonTS dataset.

    python examples/backtest_deepar_moirai.py --dataset electricity --epochs 30

DeepAR is trained with PyTorch Lightning on one GPU; Moirai (uni2ts) is used
zero-shot through its GluonTS predictor. Both are scored with the same
rolling-window evaluation (MASE / weighted quantile loss).
"""

import argparse
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from gluonts.dataset.repository import get_dataset
from gluonts.dataset.split import split
from gluonts.ev.metrics import MASE, MeanWeightedSumQuantileLoss
from gluonts.model.evaluation import evaluate_model
from gluonts.torch.model.deepar import DeepAREstimator
from gluonts.torch.distributions import StudentTOutput
from uni2ts.model.moirai import MoiraiForecast, MoiraiModule


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="electricity")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--windows", type=int, default=7)
    parser.add_argument("--moirai-size", default="small", choices=["small", "base", "large"])
    parser.add_argument("--context-length", type=int, default=512)
    parser.add_argument("--patch-size", default="auto")
    parser.add_argument("--num-samples", type=int, default=100)
    parser.add_argument("--out", default="results/backtest.json")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def train_deepar(train_ds, prediction_length: int, freq: str, args):
    estimator = DeepAREstimator(
        freq=freq,
        prediction_length=prediction_length,
        context_length=2 * prediction_length,
        num_layers=2,
        hidden_size=40,
        dropout_rate=0.1,
        distr_output=StudentTOutput(),
        batch_size=args.batch_size,
        num_batches_per_epoch=100,
        trainer_kwargs={
            "max_epochs": args.epochs,
            "accelerator": "gpu",
            "devices": 1,
            "precision": "16-mixed",
            "gradient_clip_val": 10.0,
            "enable_progress_bar": True,
        },
    )
    return estimator.train(train_ds, cache_data=True)


def moirai_predictor(prediction_length: int, target_dim: int, args):
    module = MoiraiModule.from_pretrained(f"Salesforce/moirai-1.1-R-{args.moirai_size}")
    model = MoiraiForecast(
        module=module,
        prediction_length=prediction_length,
        context_length=args.context_length,
        patch_size=args.patch_size,
        num_samples=args.num_samples,
        target_dim=target_dim,
        feat_dynamic_real_dim=0,
        past_feat_dynamic_real_dim=0,
    )
    return model.create_predictor(batch_size=args.batch_size, device="cuda")


def main():
    args = parse_args()
    set_seed(args.seed)

    dataset = get_dataset(args.dataset)
    prediction_length = dataset.metadata.prediction_length
    freq = dataset.metadata.freq

    # hold out the last `windows` rolling windows
    offset = -prediction_length * args.windows
    train_ds, test_template = split(dataset.test, offset=offset)
    test_data = test_template.generate_instances(
        prediction_length=prediction_length,
        windows=args.windows,
        distance=prediction_length,
    )

    metrics = [MASE(), MeanWeightedSumQuantileLoss(quantile_levels=[0.1, 0.5, 0.9])]
    results = {}

    print(f"Training DeepAR on {args.dataset} ({len(train_ds)} series)")
    deepar = train_deepar(train_ds, prediction_length, freq, args)
    res = evaluate_model(deepar, test_data=test_data, metrics=metrics, axis=None, mask_invalid_label=True,
                         allow_nan_forecast=False, seasonality=None)
    results["deepar"] = res.to_dict(orient="records")[0]

    print(f"Zero-shot Moirai-{args.moirai_size}")
    moirai = moirai_predictor(prediction_length, target_dim=1, args=args)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        res = evaluate_model(moirai, test_data=test_data, metrics=metrics, axis=None, mask_invalid_label=True,
                             allow_nan_forecast=False, seasonality=None)
    results["moirai"] = res.to_dict(orient="records")[0]

    print(pd.DataFrame(results).T)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2, default=float)


if __name__ == "__main__":
    main()
