"""Train one PPO agent per benchmark design, several designs in parallel.

Each worker process owns one design and one GPU (round robin over the visible
GPUs); the ABC calls themselves are CPU-bound, so more workers than GPUs is fine.

    python run_parallel.py --config configs/ppo_epfl.json --designs adder,bar,div,log2,max,multiplier,sin,sqrt
"""
import argparse
import json
import logging
import os
import sys
import time
import traceback

import numpy as np
import torch
import torch.multiprocessing as mp

from abc_env import make_env, ACTIONS
from agent import PPOAgent


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--designs", required=True, help="comma separated design names (without .aig)")
    p.add_argument("--workers", type=int, default=0, help="0 = one per design")
    p.add_argument("--out", default="results/ppo")
    p.add_argument("--no_gpu", action="store_true")
    return p.parse_args()


def worker(rank, design, cfg, out_dir, gpu, result_queue):
    # bind this process to a single GPU before anything touches CUDA
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    torch.set_num_threads(1)
    log_file = os.path.join(out_dir, design, "train.log")
    os.makedirs(os.path.dirname(log_file), exist_ok=True)
    logging.basicConfig(filename=log_file, level=logging.INFO,
                        format="%(asctime)s [%(process)d] %(message)s")
    log = logging.getLogger(design)
    try:
        seed = cfg.get("seed", 0) + rank
        np.random.seed(seed)
        torch.manual_seed(seed)
        env = make_env(os.path.join(cfg["bench_dir"], design + ".aig"), cfg["liberty"],
                       seed=seed, abc_bin=cfg.get("abc_bin", "yosys-abc"),
                       max_steps=cfg["episode_len"], workdir=os.path.join(out_dir, design, "tmp"))
        agent_cfg = dict(cfg["agent"])
        agent_cfg["use_gpu"] = gpu is not None
        agent_cfg["gpu_id"] = 0  # only one GPU is visible in this process
        agent = PPOAgent(env.state_dim, env.num_actions, agent_cfg)

        best = {"reward": -np.inf}
        state = env.reset()
        ep_reward, ep = 0.0, 0
        t0 = time.time()
        for it in range(cfg["iterations"]):
            for _ in range(cfg["rollout_steps"]):
                a, logp, v = agent.select_action(state)
                nxt, r, done, info = env.step(a)
                agent.store(state, a, logp, r, done, v)
                ep_reward += r
                state = nxt
                if done:
                    ep += 1
                    if ep_reward > best["reward"]:
                        best = {"reward": ep_reward, "recipe": info["recipe"],
                                "delay": info["delay"], "area": info["area"], "episode": ep}
                        log.info("new best: %s", json.dumps(best))
                    state = env.reset()
                    ep_reward = 0.0
            stats = agent.update(state)
            log.info("iter %d %s (%.1fs)", it, json.dumps(stats), time.time() - t0)
            if (it + 1) % cfg.get("save_every", 10) == 0:
                agent.save(os.path.join(out_dir, design, "agent_%04d.pt" % (it + 1)))
        env.close()
        result_queue.put((design, best))
    except Exception:
        log.error(traceback.format_exc())
        result_queue.put((design, {"error": traceback.format_exc()}))


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    designs = [d for d in args.designs.split(",") if d]
    os.makedirs(args.out, exist_ok=True)

    num_gpus = 0 if args.no_gpu else torch.cuda.device_count()
    print("found %d GPU(s); %d design(s)" % (num_gpus, len(designs)))
    if num_gpus == 0 and not args.no_gpu:
        print("WARNING: no GPU visible, PPO updates will run on the CPU")

    mp.set_start_method("spawn", force=True)
    queue = mp.Queue()
    procs = []
    max_workers = args.workers or len(designs)
    pending = list(enumerate(designs))
    results = {}
    while pending or procs:
        while pending and len(procs) < max_workers:
            rank, d = pending.pop(0)
            gpu = rank % num_gpus if num_gpus > 0 else None
            p = mp.Process(target=worker, args=(rank, d, cfg, args.out, gpu, queue))
            p.start()
            procs.append(p)
        d, res = queue.get()
        results[d] = res
        print("%-12s %s" % (d, json.dumps(res)))
        procs = [p for p in procs if p.is_alive()]

    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
