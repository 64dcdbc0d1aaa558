"""Launch one `wandb agent` per idle GPU for a steering/SAE hyper-parameter sweep.

    python scripts/launch_sweep.py --sweep_config configs/steering_sweep.yaml --max_gpus 8

A GPU counts as idle if less than --max_used_mb of its memory is in use (so we do not
collide with other people's jobs on the shared box).
"""

import argparse
import os
import subprocess
import sys
import time

import pynvml
import wandb
import yaml


def idle_gpus(max_used_mb: int, max_gpus: int) -> list[int]:
    pynvml.nvmlInit()
    try:
        free = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
            util = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
            used_mb = mem.used // 2**20
            if used_mb < max_used_mb and util < 10:
                free.append(i)
        return free[:max_gpus]
    finally:
        pynvml.nvmlShutdown()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweep_config", required=True)
    parser.add_argument("--sweep_id", default=None, help="attach to an existing sweep")
    parser.add_argument("--project", default="caa-steering")
    parser.add_argument("--max_gpus", type=int, default=8)
    parser.add_argument("--max_used_mb", type=int, default=2000)
    parser.add_argument("--runs_per_agent", type=int, default=10)
    args = parser.parse_args()

    if args.sweep_id is None:
        with open(args.sweep_config) as f:
            sweep_cfg = yaml.safe_load(f)
        sweep_id = wandb.sweep(sweep_cfg, project=args.project)
    else:
        sweep_id = args.sweep_id

    gpus = idle_gpus(args.max_used_mb, args.max_gpus)
    if not gpus:
        sys.exit("no idle GPUs found, try again later")
    print(f"launching {len(gpus)} agents on GPUs {gpus} for sweep {sweep_id}")

    procs = []
    for gpu in gpus:
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        # each agent sees exactly one device, so the training script can use cuda:0
        env["STEERING_DEVICE"] = "cuda:0"
        log = open(f"logs/agent_gpu{gpu}.log", "w")
        procs.append(
            subprocess.Popen(
                ["wandb", "agent", "--count", str(args.runs_per_agent), f"{args.project}/{sweep_id}"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        time.sleep(5)  # stagger HF downloads

    try:
        for p in procs:
            p.wait()
    except KeyboardInterrupt:
        for p in procs:
            p.terminate()


if __name__ == "__main__":
    main()
