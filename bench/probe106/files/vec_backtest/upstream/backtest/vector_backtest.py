"""
Vectorised long-short backtest of factor scores on the GPU.

Input is a prediction panel (pandas pickle, MultiIndex [datetime, instrument] -> score)
as written by qlib's SignalRecord or our own training scripts, plus a close-price panel.
Every rebalance day the top / bottom quantile is held equally weighted; transaction
costs are charged on turnover.  A stationary block bootstrap over daily returns gives
confidence intervals for the annualised Sharpe ratio.

    python backtest/vector_backtest.py --pred runs/stockformer/pred_test.pkl \
        --prices data/close.parquet --quantile 0.1 --cost_bps 15 --n_boot 20000
"""
import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

TRADING_DAYS = 252


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--pred", required=True)
    p.add_argument("--prices", required=True)
    p.add_argument("--quantile", type=float, default=0.1)
    p.add_argument("--hold", type=int, default=5, help="rebalance every N days")
    p.add_argument("--cost_bps", type=float, default=15.0)
    p.add_argument("--n_boot", type=int, default=20000)
    p.add_argument("--block", type=int, default=20)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--profile", action="store_true", help="emit NVTX ranges for nsys")
    p.add_argument("--out", default="backtest_out")
    return p.parse_args()


def select_device(name: str) -> torch.device:
    if name == "cuda" and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


class nvtx_range:
    """`with nvtx_range("name", enabled):` - no-op unless profiling."""

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            torch.cuda.nvtx.range_push(self.name)

    def __exit__(self, *exc):
        if self.enabled:
            torch.cuda.nvtx.range_pop()


def load_panels(pred_path, price_path):
    pred = pd.read_pickle(pred_path)
    if isinstance(pred, pd.DataFrame):
        pred = pred["score"]
    pred = pred.unstack("instrument").sort_index()
    close = pd.read_parquet(price_path)
    close = close.pivot(index="datetime", columns="instrument", values="close") if "close" in close else close
    close = close.reindex(index=pred.index, columns=pred.columns)
    fwd_ret = close.pct_change().shift(-1)  # return earned by holding from t close to t+1 close
    return pred, fwd_ret


def to_tensor(df: pd.DataFrame, device) -> torch.Tensor:
    return torch.as_tensor(df.values, dtype=torch.float32, device=device)


def quantile_weights(score: torch.Tensor, q: float) -> torch.Tensor:
    """Equal-weight long top-q / short bottom-q per day. score: [days, stocks] with NaN."""
    valid = ~torch.isnan(score)
    n = valid.sum(dim=1, keepdim=True).clamp_min(1)
    filled = torch.where(valid, score, torch.full_like(score, -float("inf")))
    rank = filled.argsort(dim=1, descending=True).argsort(dim=1).float()  # 0 = best
    k = (n.float() * q).floor().clamp_min(1)
    long = (rank < k) & valid
    short = (rank >= (n.float() - k)) & valid
    w = long.float() / k - short.float() / k
    return w


def hold_weights(w: torch.Tensor, hold: int) -> torch.Tensor:
    """Only rebalance every `hold` days; keep previous weights in between."""
    days = w.shape[0]
    idx = torch.arange(days, device=w.device)
    last_rebalance = (idx // hold) * hold
    return w[last_rebalance]


def run_backtest(score, fwd_ret, q, hold, cost_bps, profile):
    with nvtx_range("weights", profile):
        w = hold_weights(quantile_weights(score, q), hold)
    with nvtx_range("pnl", profile):
        r = torch.nan_to_num(fwd_ret, nan=0.0)
        gross = (w * r).sum(dim=1)
        turnover = torch.zeros_like(gross)
        turnover[1:] = (w[1:] - w[:-1]).abs().sum(dim=1)
        turnover[0] = w[0].abs().sum()
        net = gross - turnover * cost_bps * 1e-4
        nav = torch.cumprod(1.0 + net.double(), dim=0)
    return {"weights": w, "gross": gross, "net": net, "turnover": turnover, "nav": nav}


def sharpe(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return x.mean(dim=dim) / x.std(dim=dim).clamp_min(1e-12) * math.sqrt(TRADING_DAYS)


def block_bootstrap_sharpe(daily: torch.Tensor, n_boot: int, block: int, seed: int, profile: bool):
    """Stationary-ish block bootstrap: sample block starts uniformly, concatenate blocks."""
    device = daily.device
    gen = torch.Generator(device=device.type)
    gen.manual_seed(seed)
    T = daily.shape[0]
    n_blocks = math.ceil(T / block)
    with nvtx_range("bootstrap", profile):
        starts = torch.randint(0, T - block + 1, (n_boot, n_blocks), generator=gen, device=device)
        offs = torch.arange(block, device=device)
        idx = (starts[:, :, None] + offs[None, None, :]).reshape(n_boot, -1)[:, :T]
        samples = daily[idx]  # [n_boot, T]
        sr = sharpe(samples, dim=1)
    return sr


def max_drawdown(nav: torch.Tensor) -> float:
    peak = torch.cummax(nav, dim=0).values
    return float(((nav - peak) / peak).min())


def summarize(res, sr_boot):
    net = res["net"]
    nav = res["nav"]
    n_years = net.shape[0] / TRADING_DAYS
    ann_ret = float(nav[-1] ** (1.0 / n_years) - 1.0)
    lo, hi = torch.quantile(sr_boot.float(), torch.tensor([0.025, 0.975], device=sr_boot.device)).tolist()
    return {
        "annual_return": ann_ret,
        "annual_vol": float(net.std() * math.sqrt(TRADING_DAYS)),
        "sharpe": float(sharpe(net)),
        "sharpe_ci95": [lo, hi],
        "max_drawdown": max_drawdown(nav),
        "avg_turnover": float(res["turnover"].mean()),
        "hit_rate": float((net > 0).float().mean()),
    }


def main():
    args = parse_args()
    device = select_device(args.device)
    print(f"device: {device}" + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""))

    pred, fwd_ret = load_panels(args.pred, args.prices)
    print(f"panel: {pred.shape[0]} days x {pred.shape[1]} stocks")
    score = to_tensor(pred, device)
    ret = to_tensor(fwd_ret, device)

    on_gpu = device.type == "cuda"
    if on_gpu:
        start_evt = torch.cuda.Event(enable_timing=True)
        end_evt = torch.cuda.Event(enable_timing=True)
        start_evt.record()
    t0 = time.perf_counter()

    res = run_backtest(score, ret, args.quantile, args.hold, args.cost_bps, args.profile)
    sr_boot = block_bootstrap_sharpe(res["net"], args.n_boot, args.block, args.seed, args.profile)

    if on_gpu:
        end_evt.record()
        torch.cuda.synchronize()
        print(f"backtest + {args.n_boot} bootstrap paths: {start_evt.elapsed_time(end_evt):.1f} ms (GPU)")
    else:
        print(f"backtest + {args.n_boot} bootstrap paths: {(time.perf_counter() - t0) * 1e3:.1f} ms (CPU)")

    stats = summarize(res, sr_boot)
    for k, v in stats.items():
        print(f"{k:>14s}: {v}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {
            "gross": res["gross"].cpu().numpy(),
            "net": res["net"].cpu().numpy(),
            "turnover": res["turnover"].cpu().numpy(),
            "nav": res["nav"].cpu().numpy(),
        },
        index=pred.index,
    ).to_csv(out / "daily.csv")
    with open(out / "summary.json", "w") as f:
        json.dump(stats, f, indent=2)


if __name__ == "__main__":
    main()
