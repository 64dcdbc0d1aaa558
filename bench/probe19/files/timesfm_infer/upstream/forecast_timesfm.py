"""Batch zero-shot forecasting with the PyTorch TimesFM checkpoint.

Reads a long-format parquet (unique_id, ds, y), forecasts `horizon` steps for
every series and writes quantile forecasts next to the input file.
"""
import argparse
import logging
import os
import time

import numpy as np
import pandas as pd
import torch
import timesfm

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("timesfm-batch")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--input", required=True, help="parquet with unique_id, ds, y")
    p.add_argument("--freq", default="H")
    p.add_argument("--horizon", type=int, default=96)
    p.add_argument("--context-len", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--checkpoint", default="google/timesfm-1.0-200m-pytorch")
    p.add_argument("--backend", default="gpu", choices=["cpu", "gpu"],
                   help="'gpu' runs on the first visible CUDA device")
    p.add_argument("--gpu", type=int, default=0)
    return p.parse_args()


def load_model(args):
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", str(args.gpu))
    hparams = timesfm.TimesFmHparams(
        backend=args.backend,
        per_core_batch_size=args.batch_size,
        horizon_len=args.horizon,
        context_len=args.context_len,
        num_layers=20,
        use_positional_embedding=True,
    )
    ckpt = timesfm.TimesFmCheckpoint(huggingface_repo_id=args.checkpoint)
    tfm = timesfm.TimesFm(hparams=hparams, checkpoint=ckpt)
    return tfm


def to_batches(df, context_len):
    series, ids = [], []
    for uid, grp in df.groupby("unique_id", sort=False):
        y = grp.sort_values("ds")["y"].to_numpy(dtype=np.float32)
        series.append(y[-context_len:])
        ids.append(uid)
    return ids, series


def rolling_residual_scale(series, horizon):
    """Naive seasonal scale used to normalise the reported error."""
    out = []
    for y in series:
        if len(y) <= horizon:
            out.append(np.nan)
            continue
        out.append(float(np.mean(np.abs(y[horizon:] - y[:-horizon]))))
    return np.asarray(out)


def main():
    args = parse_args()
    df = pd.read_parquet(args.input)
    ids, series = to_batches(df, args.context_len)
    log.info("loaded %d series from %s", len(series), args.input)

    tfm = load_model(args)
    device = torch.device("cuda" if args.backend == "gpu" else "cpu")
    log.info("model on %s", device)

    freq_map = {"H": 0, "D": 0, "W": 1, "M": 1, "Q": 2, "Y": 2}
    freq_ids = [freq_map.get(args.freq.upper(), 0)] * len(series)

    t0 = time.perf_counter()
    point, quantiles = tfm.forecast(series, freq=freq_ids)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    log.info("forecast took %.2fs", time.perf_counter() - t0)

    scales = rolling_residual_scale(series, args.horizon)
    rows = []
    for i, uid in enumerate(ids):
        for h in range(args.horizon):
            rows.append({
                "unique_id": uid,
                "step": h + 1,
                "mean": float(point[i, h]),
                "q10": float(quantiles[i, h, 1]),
                "q50": float(quantiles[i, h, 5]),
                "q90": float(quantiles[i, h, 9]),
                "scale": scales[i],
            })
    out = pd.DataFrame(rows)
    out_path = os.path.splitext(args.input)[0] + "_timesfm.parquet"
    out.to_parquet(out_path, index=False)
    log.info("wrote %s (%d rows)", out_path, len(out))

    if torch.cuda.is_available():
        free, total = torch.cuda.mem_get_info(device)
        log.info("device memory in use: %.1f GiB of %.1f GiB", (total - free) / 2**30, total / 2**30)


if __name__ == "__main__":
    main()
