"""Sample joint rollouts from a trained MotionLM checkpoint and write a WOMD interaction-challenge submission.

    python -m motionlm.rollout --ckpt runs/motionlm/last.pt --split validation_interactive \
        --num_rollouts 512 --batch_size 4 --out submissions/motionlm_val.binproto

Prints per-scene latency; rollouts are the bottleneck, so the decode loop is timed with CUDA events.
"""
import argparse
import logging
import os
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from motionlm.data import InteractiveScenes, collate_scenes
from motionlm.encoder import SceneEncoder
from motionlm.model import MotionLM, aggregate_rollouts, tokens_to_trajectories
from motionlm.submission import SubmissionWriter

try:
    import pynvml
    pynvml.nvmlInit()
    _NVML_HANDLE = pynvml.nvmlDeviceGetHandleByIndex(int(os.environ.get("LOCAL_RANK", 0)))
except Exception:  # no NVML (e.g. CPU box or container without the driver libs)
    pynvml = None
    _NVML_HANDLE = None

log = logging.getLogger("motionlm.rollout")


def get_device(requested: str) -> torch.device:
    """'auto' picks the first GPU if there is one."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(requested)


def gpu_util() -> str:
    if _NVML_HANDLE is None:
        return "n/a"
    u = pynvml.nvmlDeviceGetUtilizationRates(_NVML_HANDLE)
    return f"{u.gpu}%"


def load_models(ckpt_path: str, device: torch.device):
    ckpt = torch.load(ckpt_path, map_location="cpu")
    hp = ckpt["hparams"]
    encoder = SceneEncoder(**hp["encoder"])
    decoder = MotionLM(**hp["decoder"])
    encoder.load_state_dict(ckpt["encoder"])
    decoder.load_state_dict(ckpt["decoder"])
    encoder.to(device).eval()
    decoder.to(device).eval()
    if hp.get("half_inference", True):
        encoder.half()
        decoder.half()
    return encoder, decoder


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--data_root", default="/data/womd/processed")
    ap.add_argument("--split", default="validation_interactive")
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    ap.add_argument("--num_rollouts", type=int, default=512)
    ap.add_argument("--num_modes", type=int, default=6)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top_k", type=int, default=None)
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max_scenes", type=int, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    device = get_device(args.device)
    log.info(f"running on {device} ({torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'})")
    torch.backends.cuda.matmul.allow_tf32 = True

    encoder, decoder = load_models(args.ckpt, device)
    dataset = InteractiveScenes(Path(args.data_root) / args.split, max_scenes=args.max_scenes)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=False, num_workers=4,
                                         collate_fn=collate_scenes, pin_memory=device.type == "cuda")

    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)

    writer = SubmissionWriter(args.out, account_name=os.environ.get("WOMD_ACCOUNT", "anonymous"),
                              method_name="MotionLM-repro")
    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    latencies = []

    for batch in tqdm(loader, desc="rollout"):
        batch = {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}
        with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=device.type != "cpu"):
            memory, memory_mask = encoder(batch)
            start_evt.record()
            tokens = decoder.rollout(memory, memory_mask, num_rollouts=args.num_rollouts,
                                     temperature=args.temperature, top_k=args.top_k, generator=gen)
            end_evt.record()
        torch.cuda.synchronize(device)
        latencies.append(start_evt.elapsed_time(end_evt) / len(batch["scenario_id"]))

        B = memory.shape[0]
        R = args.num_rollouts
        start_pos = batch["agent_pos"].repeat_interleave(R, dim=0)
        start_vel = batch["agent_vel"].repeat_interleave(R, dim=0)
        trajs = tokens_to_trajectories(tokens, start_pos.float(), start_vel.float()).view(B, R, *tokens.shape[1:], 2)
        for i in range(B):
            modes, weights = aggregate_rollouts(trajs[i].float(), num_modes=args.num_modes)
            writer.add(batch["scenario_id"][i], batch["agent_ids"][i].tolist(),
                       modes.cpu().numpy(), weights.cpu().numpy())

    writer.close()
    lat = np.array(latencies)
    log.info(f"decode latency per scene: mean {lat.mean():.1f} ms, p90 {np.percentile(lat, 90):.1f} ms, "
             f"gpu util {gpu_util()}, peak mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
