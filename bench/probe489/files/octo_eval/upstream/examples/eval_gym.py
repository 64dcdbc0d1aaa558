"""
Roll out a (finetuned) Octo policy in a gym environment and save videos.

    python examples/eval_gym.py --checkpoint finetune_runs/octo_finetuned_final.pt --env aloha-sim-cube-v0
"""
import argparse
import os
from collections import deque

import gym
import imageio
import numpy as np
import torch

from octo_pytorch.model.octo_model import OctoModel
from octo_pytorch.utils.gym_wrappers import HistoryWrapper, NormalizeProprio, RHCWrapper, TemporalEnsembleWrapper


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--env", default="aloha-sim-cube-v0")
    p.add_argument("--instruction", default="pick up the cube and hand it over")
    p.add_argument("--episodes", type=int, default=10)
    p.add_argument("--max_steps", type=int, default=400)
    p.add_argument("--window_size", type=int, default=2)
    p.add_argument("--exec_horizon", type=int, default=50)
    p.add_argument("--temporal_ensemble", action="store_true")
    p.add_argument("--video_dir", default="./eval_videos")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def to_torch_obs(obs, device):
    out = {}
    for k, v in obs.items():
        t = torch.from_numpy(np.asarray(v))[None]
        out[k] = t.to(device)
    return out


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    model = OctoModel.load_pretrained(args.checkpoint)
    device = model.device
    print(f"Loaded Octo policy on {device}")

    env = gym.make(args.env)
    env = NormalizeProprio(env, model.dataset_statistics)
    env = HistoryWrapper(env, args.window_size)
    if args.temporal_ensemble:
        env = TemporalEnsembleWrapper(env, args.exec_horizon)
    else:
        env = RHCWrapper(env, args.exec_horizon)

    task = model.create_tasks(texts=[args.instruction])
    os.makedirs(args.video_dir, exist_ok=True)

    successes = []
    generator = torch.Generator(device=device).manual_seed(args.seed)
    for ep in range(args.episodes):
        obs, info = env.reset()
        frames = deque()
        episode_return = 0.0
        for t in range(args.max_steps):
            frames.append(obs["image_primary"][-1])
            actions = model.sample_actions(
                to_torch_obs(obs, device),
                task,
                unnormalization_statistics=model.dataset_statistics["action"],
                generator=generator,
            )
            actions = actions[0].float().cpu().numpy()
            obs, reward, done, trunc, info = env.step(actions)
            episode_return += reward
            if done or trunc:
                break
        success = bool(info.get("is_success", episode_return > 0))
        successes.append(success)
        imageio.mimsave(os.path.join(args.video_dir, f"ep{ep:03d}.mp4"), list(frames), fps=50)
        print(f"episode {ep}: return={episode_return:.2f} success={success}")

    print(f"success rate: {np.mean(successes):.2f} over {len(successes)} episodes")


if __name__ == "__main__":
    main()
