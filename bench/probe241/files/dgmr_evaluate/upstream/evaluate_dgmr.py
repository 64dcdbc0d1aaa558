"""Evaluate a trained DGMR checkpoint on the held-out radar test set.

Computes CSI at several thresholds, pooled CRPS (ensemble of N samples) and the
radially averaged power spectral density, and reports the inference throughput.

    python evaluate_dgmr.py --ckpt runs/dgmr/dgmr_epoch099.pth --config configs/dgmr_radar_uk.yaml \
        --num-samples 20 --fp16
"""
import argparse
import json
import os
import time
from collections import defaultdict

import numpy as np
import torch
import torch.nn.functional as F
import yaml
from torch.utils.data import DataLoader
from tqdm import tqdm

from dgmr import Generator, LatentConditioningStack, ContextConditioningStack, Sampler
from dgmr.data import RadarSequenceDataset
from dgmr.metrics import csi_score, crps_ensemble_pooled, rapsd

DEFAULT_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
THRESHOLDS_MM_H = (1.0, 4.0, 8.0)
POOL_SCALES = (1, 4, 16)


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--num-samples", type=int, default=20, help="ensemble members per input")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--device", default=DEFAULT_DEVICE)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--max-batches", type=int, default=None)
    parser.add_argument("--out", default="eval_results.json")
    return parser.parse_args()


def build_generator(cfg):
    m = cfg["model"]
    return Generator(
        conditioning_stack=ContextConditioningStack(
            input_channels=m["input_channels"],
            output_channels=m["output_shape"] * 4,
            num_context_steps=m["forecast_steps_in"]),
        latent_stack=LatentConditioningStack(
            shape=(8 * m["input_channels"], m["output_shape"] // 32, m["output_shape"] // 32),
            output_channels=m["latent_channels"]),
        sampler=Sampler(
            forecast_steps=m["forecast_steps_out"],
            latent_channels=m["latent_channels"],
            context_channels=m["context_channels"]))


def load_weights(generator, ckpt_path):
    state = torch.load(ckpt_path, map_location="cpu")
    state = state.get("generator", state)
    # strip the DDP prefix if the checkpoint was written from a wrapped model
    state = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state.items()}
    missing, unexpected = generator.load_state_dict(state, strict=False)
    if missing:
        print(f"[warn] missing keys: {missing[:5]} ... ({len(missing)})")
    if unexpected:
        print(f"[warn] unexpected keys: {unexpected[:5]} ... ({len(unexpected)})")
    return generator


@torch.no_grad()
def sample_ensemble(generator, context, num_samples, fp16):
    members = []
    with torch.cuda.amp.autocast(enabled=fp16, dtype=torch.float16):
        for _ in range(num_samples):
            members.append(generator(context).float())
    return torch.stack(members, dim=1)  # (B, N, T, C, H, W)


def main():
    args = get_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    dataset = RadarSequenceDataset(cfg["data"]["root"], split=args.split,
                                   in_steps=cfg["model"]["forecast_steps_in"],
                                   out_steps=cfg["model"]["forecast_steps_out"],
                                   crop=cfg["data"]["crop_size"])
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False,
                        num_workers=cfg["data"]["num_workers"], pin_memory=True)

    generator = load_weights(build_generator(cfg), args.ckpt).to(device).eval()
    print(f"running on {device} ({torch.cuda.get_device_name(device)}), fp16={args.fp16}")

    scores = defaultdict(list)
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    total_ms, total_fields = 0.0, 0

    for i, (context, target) in enumerate(tqdm(loader, desc="eval")):
        if args.max_batches is not None and i >= args.max_batches:
            break
        context = context.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)

        start_evt.record()
        ensemble = sample_ensemble(generator, context, args.num_samples, args.fp16)
        end_evt.record()
        torch.cuda.synchronize(device)
        total_ms += start_evt.elapsed_time(end_evt)
        total_fields += ensemble.shape[0] * ensemble.shape[1]

        # metrics are computed on the host in float64
        ens = ensemble.cpu().numpy().astype(np.float64)
        tgt = target.cpu().numpy().astype(np.float64)
        for thr in THRESHOLDS_MM_H:
            scores[f"csi@{thr}"].append(csi_score(ens.mean(axis=1), tgt, threshold=thr))
        for scale in POOL_SCALES:
            scores[f"crps_pool{scale}"].append(crps_ensemble_pooled(ens, tgt, pool=scale))
        scores["rapsd_pred"].append(rapsd(ens[:, 0, -1, 0]))
        scores["rapsd_obs"].append(rapsd(tgt[:, -1, 0]))

    summary = {k: float(np.mean(v)) for k, v in scores.items() if not k.startswith("rapsd")}
    summary["ms_per_sample"] = total_ms / max(total_fields, 1)
    summary["device"] = str(device)
    print(json.dumps(summary, indent=2))
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)
    np.savez(os.path.splitext(args.out)[0] + "_rapsd.npz",
             pred=np.concatenate(scores["rapsd_pred"]), obs=np.concatenate(scores["rapsd_obs"]))


if __name__ == "__main__":
    main()
