"""DeepAR (PyTorch backend) on the electricity data set with GluonTS."""
import argparse
import json

import torch
from gluonts.dataset.repository import get_dataset
from gluonts.evaluation import Evaluator, make_evaluation_predictions
from gluonts.torch.model.deepar import DeepAREstimator
from gluonts.torch.distributions import StudentTOutput


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="electricity")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-batches-per-epoch", type=int, default=100)
    parser.add_argument("--context-multiple", type=int, default=4)
    parser.add_argument("--num-samples", type=int, default=100)
    parser.add_argument("--out", default="deepar_metrics.json")
    return parser.parse_args()


def make_estimator(dataset, args):
    prediction_length = dataset.metadata.prediction_length
    trainer_kwargs = {
        "max_epochs": args.epochs,
        "accelerator": "cuda",
        "devices": 1,
        "precision": "bf16-mixed",
        "gradient_clip_val": 10.0,
        "enable_progress_bar": True,
    }
    return DeepAREstimator(
        freq=dataset.metadata.freq,
        prediction_length=prediction_length,
        context_length=args.context_multiple * prediction_length,
        num_layers=2,
        hidden_size=40,
        dropout_rate=0.1,
        num_feat_static_cat=1,
        cardinality=[int(dataset.metadata.feat_static_cat[0].cardinality)],
        distr_output=StudentTOutput(),
        batch_size=args.batch_size,
        num_batches_per_epoch=args.num_batches_per_epoch,
        lr=1e-3,
        trainer_kwargs=trainer_kwargs,
    )


def evaluate(predictor, dataset, num_samples):
    forecast_it, ts_it = make_evaluation_predictions(
        dataset=dataset.test, predictor=predictor, num_samples=num_samples
    )
    forecasts = list(forecast_it)
    tss = list(ts_it)
    evaluator = Evaluator(quantiles=[0.1, 0.5, 0.9])
    agg_metrics, item_metrics = evaluator(tss, forecasts)
    return agg_metrics, item_metrics


def main():
    args = parse_args()
    torch.manual_seed(0)
    dataset = get_dataset(args.dataset)

    estimator = make_estimator(dataset, args)
    predictor = estimator.train(dataset.train, cache_data=True)

    # the predictor keeps the network on the training device; move it for sampling
    predictor = predictor.to(torch.device("cuda"))
    agg_metrics, _ = evaluate(predictor, dataset, args.num_samples)

    keep = ["MSE", "abs_error", "MASE", "sMAPE", "mean_wQuantileLoss", "ND", "NRMSE"]
    summary = {k: float(agg_metrics[k]) for k in keep if k in agg_metrics}
    summary["device"] = str(next(predictor.prediction_net.parameters()).device)
    print(json.dumps(summary, indent=2))
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)

    predictor.serialize_dir = None
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        print("max memory (MiB):", torch.cuda.max_memory_reserved() // 2**20)


if __name__ == "__main__":
    main()
