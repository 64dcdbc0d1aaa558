# Copyright 2022 NNAISENSE SA
# SPDX-License-Identifier: Apache-2.0
"""
Train a linear / MLP policy for a MuJoCo task with PGPE + ClipUp.

This mirrors the setup of "ClipUp: A Simple and Powerful Optimizer for
Distribution-based Policy Evolution". Rollouts are executed by Ray actors on
CPUs (one environment per actor); the search distribution and its update are
tiny, so the main process keeps them on the CPU as well. Only the final
re-evaluation of the centre solution optionally uses a GPU, for the larger
policies.

Usage:
    python rl_clipup.py --env Humanoid-v4 --policy mlp --num-actors max
    python rl_clipup.py --env Walker2d-v4 --eval-device cuda
"""

import argparse
import os
import pickle
from datetime import datetime

import torch
from torch import nn

from evotorch.algorithms import PGPE
from evotorch.logging import PicklingLogger, StdOutLogger
from evotorch.neuroevolution import GymNE
from evotorch.neuroevolution.net import LocomotorNet

ENV_CONFIGS = {
    "Humanoid-v4": dict(popsize=200, center_lr=0.15, stdev_init=0.1, max_speed=0.3, generations=1000),
    "Walker2d-v4": dict(popsize=100, center_lr=0.075, stdev_init=0.1, max_speed=0.15, generations=500),
    "HalfCheetah-v4": dict(popsize=100, center_lr=0.075, stdev_init=0.1, max_speed=0.15, generations=500),
    "Ant-v4": dict(popsize=200, center_lr=0.075, stdev_init=0.1, max_speed=0.15, generations=800),
}


def linear_policy(obs_length: int, act_length: int) -> nn.Module:
    return nn.Linear(obs_length, act_length, bias=True)


def mlp_policy(obs_length: int, act_length: int, hidden: int = 64) -> nn.Module:
    return nn.Sequential(
        nn.Linear(obs_length, hidden),
        nn.Tanh(),
        nn.Linear(hidden, hidden),
        nn.Tanh(),
        nn.Linear(hidden, act_length),
    )


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", default="Humanoid-v4", choices=sorted(ENV_CONFIGS))
    parser.add_argument("--policy", default="linear", choices=["linear", "mlp", "locomotor"])
    parser.add_argument("--num-actors", default="max")
    parser.add_argument("--episode-length", type=int, default=1000)
    parser.add_argument("--num-episodes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval-device", default="cpu", help="device for the final re-evaluation (e.g. cuda)")
    parser.add_argument("--save-dir", default="results")
    return parser.parse_args()


def build_problem(args) -> GymNE:
    if args.policy == "linear":
        network = linear_policy
    elif args.policy == "mlp":
        network = mlp_policy
    else:
        network = lambda obs_length, act_length: LocomotorNet(  # noqa: E731
            in_features=obs_length, out_features=act_length, num_sinusoids=16
        )

    num_actors = args.num_actors
    if num_actors not in ("max", "num_cpus"):
        num_actors = int(num_actors)

    return GymNE(
        env=args.env,
        network=network,
        observation_normalization=True,
        decrease_rewards_by=1.0 if args.env.startswith("Humanoid") else 0.0,
        episode_length=args.episode_length,
        num_episodes=args.num_episodes,
        num_actors=num_actors,
        seed=args.seed,
    )


def evaluate_center(problem: GymNE, center: torch.Tensor, device: str, episodes: int = 10):
    """Re-evaluate the final centre policy for a number of episodes."""
    policy = problem.to_policy(center)
    if device.startswith("cuda"):
        policy = policy.cuda()
    policy.eval()
    returns = []
    for _ in range(episodes):
        result = problem.visualize(policy) if False else problem.run(policy, num_episodes=1)
        returns.append(float(result["cumulative_reward"]))
    return sum(returns) / len(returns)


def export_policy(policy: nn.Module, obs_length: int, path: str):
    """Exports the evolved policy to TorchScript for the C++ MuJoCo runner."""
    policy = policy.cpu().eval()
    example = torch.zeros(1, obs_length)
    traced = torch.jit.trace(policy, example)
    traced.save(path)
    return path


def main():
    args = parse_args()
    cfg = ENV_CONFIGS[args.env]
    torch.manual_seed(args.seed)

    problem = build_problem(args)
    searcher = PGPE(
        problem,
        popsize=cfg["popsize"],
        center_learning_rate=cfg["center_lr"],
        stdev_learning_rate=0.1,
        stdev_init=cfg["stdev_init"],
        optimizer="clipup",
        optimizer_config={"max_speed": cfg["max_speed"]},
        ranking_method="centered",
        num_interactions=int(cfg["popsize"] * args.episode_length * 0.75),
        popsize_max=cfg["popsize"] * 8,
    )

    run_name = f"{args.env}_{args.policy}_{datetime.now():%Y%m%d-%H%M%S}"
    save_dir = os.path.join(args.save_dir, run_name)
    os.makedirs(save_dir, exist_ok=True)

    StdOutLogger(searcher, interval=10)
    PicklingLogger(searcher, interval=50, directory=save_dir, items_to_save=["center", "stdev"])

    searcher.run(cfg["generations"])

    center = searcher.status["center"]
    score = evaluate_center(problem, center, args.eval_device)
    print(f"Final centre re-evaluated: mean return = {score:.2f}")

    with open(os.path.join(save_dir, "final_policy.pkl"), "wb") as f:
        pickle.dump(
            {
                "policy": problem.to_policy(center).cpu(),
                "obs_stats": problem.get_observation_stats(),
                "env": args.env,
            },
            f,
        )
    export_policy(problem.to_policy(center), problem.observation_length, os.path.join(save_dir, "policy.pt"))
    problem.kill_actors()


if __name__ == "__main__":
    main()
