#  Copyright (c) Microsoft Corporation.
#  Licensed under the MIT License.
"""
Daily signal generation and rolling backtest for a PyTorch model trained with `qrun`.

The trained model object is stored by `SignalRecord` in the MLflow recorder
(`params.pkl`).  This script reloads it, moves it to the requested card,
predicts the latest trading day(s) and optionally runs a TopkDropout backtest
over the prediction window.

Example
-------
    python daily_inference.py --experiment workflow --recorder_id 3f2a... \
        --start 2021-01-04 --end 2021-06-30 --gpu 0 --backtest
"""
import argparse
import os
import random
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

import qlib
from qlib.constant import REG_CN
from qlib.contrib.evaluate import backtest_daily, risk_analysis
from qlib.contrib.strategy import TopkDropoutStrategy
from qlib.data.dataset import DatasetH
from qlib.log import get_module_logger
from qlib.utils import init_instance_by_config
from qlib.workflow import R

logger = get_module_logger("daily_inference")

# attribute names under which the contrib models keep their nn.Module
NET_ATTRS = ("lstm_model", "gru_model", "GAT_model", "HIST_model", "ALSTM_model", "model", "tra", "dnn_model")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--provider_uri", default="~/.qlib/qlib_data/cn_data")
    parser.add_argument("--experiment", default="workflow")
    parser.add_argument("--recorder_id", required=True)
    parser.add_argument("--start", default=None, help="first day to predict (default: last trading day)")
    parser.add_argument("--end", default=None)
    parser.add_argument("--gpu", type=int, default=0, help="CUDA device index, -1 for CPU")
    parser.add_argument("--topk", type=int, default=50)
    parser.add_argument("--n_drop", type=int, default=5)
    parser.add_argument("--account", type=float, default=1e8)
    parser.add_argument("--benchmark", default="SH000300")
    parser.add_argument("--backtest", action="store_true")
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument("--out_dir", default="./daily_output")
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    # make GRU/LSTM kernels deterministic so that re-runs give identical signals
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def pick_device(gpu: int) -> torch.device:
    if gpu >= 0 and torch.cuda.is_available():
        if gpu >= torch.cuda.device_count():
            logger.warning(f"gpu {gpu} not visible, falling back to 0")
            gpu = 0
        return torch.device(f"cuda:{gpu}")
    logger.warning("running inference on CPU")
    return torch.device("cpu")


def load_model(experiment, recorder_id, device):
    recorder = R.get_recorder(recorder_id=recorder_id, experiment_name=experiment)
    model = recorder.load_object("params.pkl")
    # contrib models remember the device they were trained on in `self.device`
    model.device = device
    moved = []
    for name in NET_ATTRS:
        net = getattr(model, name, None)
        if isinstance(net, torch.nn.Module):
            net.to(device)
            moved.append(name)
    logger.info(f"model {type(model).__name__} loaded, modules on {device}: {moved}")
    return model, recorder


def build_dataset(recorder, start, end):
    task = recorder.load_object("task")
    ds_cfg = task["dataset"]
    handler_kwargs = ds_cfg["kwargs"]["handler"]["kwargs"]
    if end is not None:
        handler_kwargs["end_time"] = end
    seg = list(ds_cfg["kwargs"]["segments"]["test"])
    if start is not None:
        seg[0] = start
    if end is not None:
        seg[1] = end
    ds_cfg["kwargs"]["segments"]["test"] = seg
    return init_instance_by_config(ds_cfg, accept_types=DatasetH), task


def timed_predict(model, dataset, device):
    on_gpu = device.type == "cuda"
    if on_gpu:
        torch.cuda.reset_peak_memory_stats(device)
    tic = time.perf_counter()
    pred = model.predict(dataset)
    if on_gpu:
        torch.cuda.synchronize(device)
        peak = torch.cuda.max_memory_allocated(device) / 1024**2
        logger.info(f"peak device memory {peak:.1f} MiB")
    logger.info(f"predicted {len(pred)} rows in {time.perf_counter() - tic:.2f}s")
    if isinstance(pred, pd.Series):
        pred = pred.to_frame("score")
    return pred


def run_backtest(pred, args):
    strategy = TopkDropoutStrategy(signal=pred, topk=args.topk, n_drop=args.n_drop)
    start, end = pred.index.get_level_values("datetime").min(), pred.index.get_level_values("datetime").max()
    report, positions = backtest_daily(
        start_time=start,
        end_time=end,
        strategy=strategy,
        account=args.account,
        benchmark=args.benchmark,
        exchange_kwargs={
            "limit_threshold": 0.095,
            "deal_price": "close",
            "open_cost": 0.0005,
            "close_cost": 0.0015,
            "min_cost": 5,
        },
    )
    analysis = dict()
    analysis["excess_return_without_cost"] = risk_analysis(report["return"] - report["bench"])
    analysis["excess_return_with_cost"] = risk_analysis(report["return"] - report["bench"] - report["cost"])
    analysis_df = pd.concat(analysis)
    return report, positions, analysis_df


def main():
    args = parse_args()
    set_seed(args.seed)
    qlib.init(provider_uri=args.provider_uri, region=REG_CN)

    device = pick_device(args.gpu)
    model, recorder = load_model(args.experiment, args.recorder_id, device)
    dataset, task = build_dataset(recorder, args.start, args.end)

    pred = timed_predict(model, dataset, device)

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    last_day = pred.index.get_level_values("datetime").max()
    pred.to_pickle(out_dir / "pred.pkl")
    latest = pred.xs(last_day, level="datetime").sort_values("score", ascending=False)
    latest.head(args.topk).to_csv(out_dir / f"top{args.topk}_{last_day:%Y%m%d}.csv")
    logger.info(f"top-{args.topk} for {last_day:%Y-%m-%d} written to {out_dir}")

    if args.backtest:
        report, positions, analysis_df = run_backtest(pred, args)
        report.to_csv(out_dir / "report.csv")
        analysis_df.to_csv(out_dir / "risk_analysis.csv")
        print(analysis_df)

    if device.type == "cuda":
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
