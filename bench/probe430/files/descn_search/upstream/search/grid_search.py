# -*- coding: utf-8 -*-
"""
Small grid search over the DESCN loss weights.  Every trial is a separate
`python main.py` process; trials are scheduled onto whichever GPU currently has
the most free memory so several searches can share one machine.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

GRID = {
    "prpsy_w": [0.5, 1.0],
    "escvr1_w": [0.5, 1.0],
    "escvr0_w": [0.5, 1.0],
    "h1_w": [0.0, 0.1],
    "h0_w": [0.0, 0.1],
    "lr": [0.001, 0.0005],
}


def free_memory_per_gpu():
    """Return the free memory (MiB) of every visible GPU, as reported by nvidia-smi."""
    out = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=memory.free", "--format=csv,nounits,noheader"]
    ).decode()
    return [int(line) for line in out.strip().splitlines()]


def pick_gpu(min_free_mb):
    while True:
        free = free_memory_per_gpu()
        best = max(range(len(free)), key=lambda i: free[i])
        if free[best] >= min_free_mb:
            return best
        time.sleep(30)


def launch(cfg_path, gpu, seed, out_dir):
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    cmd = [sys.executable, "main.py", "--config", cfg_path, "--gpu", "0",
           "--seed", str(seed), "--output_dir", out_dir]
    return subprocess.Popen(cmd, env=env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base_config", default="configs/descn_lzd.json")
    parser.add_argument("--out", default="results/grid")
    parser.add_argument("--max_parallel", type=int, default=4)
    parser.add_argument("--min_free_mb", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=2022)
    args = parser.parse_args()

    with open(args.base_config) as f:
        base = json.load(f)

    keys = sorted(GRID)
    trials = [dict(zip(keys, values)) for values in itertools.product(*(GRID[k] for k in keys))]
    print("%d trials" % len(trials))

    os.makedirs(args.out, exist_ok=True)
    running = []
    for i, trial in enumerate(trials):
        cfg = dict(base, **trial)
        cfg["model_name"] = "DESCN_t%03d" % i
        fd, path = tempfile.mkstemp(suffix=".json", dir=args.out)
        with os.fdopen(fd, "w") as f:
            json.dump(cfg, f)

        while len(running) >= args.max_parallel:
            running = [p for p in running if p.poll() is None]
            time.sleep(5)

        gpu = pick_gpu(args.min_free_mb)
        print("trial %d -> gpu %d: %s" % (i, gpu, trial))
        running.append(launch(path, gpu, args.seed, args.out))
        time.sleep(20)  # give the process time to allocate before the next probe

    for p in running:
        p.wait()


if __name__ == "__main__":
    main()
