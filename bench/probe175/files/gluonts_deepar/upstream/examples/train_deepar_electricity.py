"""Train / evaluate GluonTS' PyTorch DeepAR on electricity (or any repository dataset).

    python examples/train_deepar_electricity.py --dataset electricity --epochs 50 --gpus 1
    python examples/train_deepar_electricity.py --dataset solar-energy --evaluate-only --model-dir runs/solar

GPU notes: bf16 autocast is used on Ampere+ cards, fp16 otherwise. On a single A100 one epoch of
electricity (100 batches x 64) takes ~6 s.
"""
import argparse
import json
import logging
import os
import random
from pathlib import Path

import numpy as np
import pandas as pd
import torch

import lightning.pytorch as pl
from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger

from gluonts.dataset.repository import get_dataset
from gluonts.dataset.split import split
from gluonts.evaluation import Evaluator, make_evaluation_predictions
from gluonts.torch.distributions import NegativeBinomialOutput, StudentTOutput, NormalOutput
from gluonts.torch.model.deepar import DeepAREstimator
from gluonts.torch.model.predictor import PyTorchPredictor

logger = logging.getLogger("deepar")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

DISTRIBUTIONS = {
    "student_t": StudentTOutput,
    "negbin": NegativeBinomialOutput,
    "normal": NormalOutput,
}


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    pl.seed_everything(seed, workers=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="electricity")
    p.add_argument("--distr", default="student_t", choices=sorted(DISTRIBUTIONS))
    p.add_argument("--context-length", type=int, default=None, help="defaults to 2 x prediction_length")
    p.add_argument("--num-layers", type=int, default=2)
    p.add_argument("--hidden-size", type=int, default=40)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight-decay", type=float, default=1e-8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--batches-per-epoch", type=int, default=100)
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--num-samples", type=int, default=100)
    p.add_argument("--gpus", type=int, default=1, help="number of GPUs for training (0 = CPU)")
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--model-dir", default=None)
    p.add_argument("--evaluate-only", action="store_true")
    return p.parse_args()


def build_estimator(args, metadata):
    prediction_length = metadata.prediction_length
    context_length = args.context_length or 2 * prediction_length

    use_gpu = args.gpus > 0 and torch.cuda.is_available()
    if use_gpu:
        # TF32 tensor cores for the fp32 matmuls that stay outside autocast
        torch.set_float32_matmul_precision("medium")
        precision = "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"
        trainer_kwargs = {
            "accelerator": "gpu",
            "devices": args.gpus,
            "precision": precision,
        }
    else:
        trainer_kwargs = {"accelerator": "cpu"}

    run_dir = Path(args.model_dir or f"runs/{args.dataset}")
    run_dir.mkdir(parents=True, exist_ok=True)
    trainer_kwargs.update(
        max_epochs=args.epochs,
        gradient_clip_val=10.0,
        default_root_dir=str(run_dir),
        logger=CSVLogger(str(run_dir), name="lightning"),
        callbacks=[
            EarlyStopping(monitor="train_loss", patience=10, mode="min"),
            LearningRateMonitor(logging_interval="epoch"),
            ModelCheckpoint(monitor="train_loss", mode="min", save_top_k=1),
        ],
    )

    return DeepAREstimator(
        freq=metadata.freq,
        prediction_length=prediction_length,
        context_length=context_length,
        num_layers=args.num_layers,
        hidden_size=args.hidden_size,
        dropout_rate=args.dropout,
        lr=args.lr,
        weight_decay=args.weight_decay,
        distr_output=DISTRIBUTIONS[args.distr](),
        batch_size=args.batch_size,
        num_batches_per_epoch=args.batches_per_epoch,
        num_feat_static_cat=len(metadata.feat_static_cat) if metadata.feat_static_cat else 0,
        cardinality=[int(c.cardinality) for c in metadata.feat_static_cat] if metadata.feat_static_cat else None,
        trainer_kwargs=trainer_kwargs,
    ), run_dir


def evaluate(predictor, test_data, num_samples, out_dir):
    forecast_it, ts_it = make_evaluation_predictions(
        dataset=test_data, predictor=predictor, num_samples=num_samples
    )
    forecasts = list(forecast_it)
    tss = list(ts_it)
    evaluator = Evaluator(quantiles=[0.1, 0.5, 0.9], num_workers=0)
    agg_metrics, item_metrics = evaluator(tss, forecasts)
    keys = ["mean_wQuantileLoss", "ND", "NRMSE", "MASE", "sMAPE", "MSIS"]
    summary = {k: float(agg_metrics[k]) for k in keys if k in agg_metrics}
    logger.info("metrics: %s", json.dumps(summary, indent=2))
    with open(os.path.join(out_dir, "metrics.json"), "w") as f:
        json.dump(summary, f, indent=2)
    item_metrics.to_csv(os.path.join(out_dir, "item_metrics.csv"), index=False)
    return summary


def main():
    args = parse_args()
    set_seed(args.seed)

    dataset = get_dataset(args.dataset)
    metadata = dataset.metadata
    logger.info("dataset %s: freq=%s, prediction_length=%d, %d train series",
                args.dataset, metadata.freq, metadata.prediction_length, len(dataset.train))

    device = "cuda" if torch.cuda.is_available() and args.gpus > 0 else "cpu"

    if args.evaluate_only:
        predictor = PyTorchPredictor.deserialize(Path(args.model_dir), device=device)
        run_dir = Path(args.model_dir)
    else:
        estimator, run_dir = build_estimator(args, metadata)
        predictor = estimator.train(
            training_data=dataset.train,
            cache_data=True,
            num_workers=args.num_workers,
            shuffle_buffer_length=1024,
        )
        predictor.serialize(run_dir)
        # the predictor returned by train() lives wherever Lightning left the module
        predictor = predictor.to(device) if hasattr(predictor, "to") else predictor

    if torch.cuda.is_available():
        logger.info("peak GPU memory: %.1f MB", torch.cuda.max_memory_allocated() / 2 ** 20)

    evaluate(predictor, dataset.test, args.num_samples, str(run_dir))


if __name__ == "__main__":
    main()
