"""Minimal RL4CO example: train the Attention Model (Kool et al. 2019) on TSP50 with
REINFORCE and a greedy-rollout baseline, then compare greedy tours before/after training.

    python examples/train_tsp_am.py --num_loc 50 --max_epochs 100 --devices 1

On a single A100 one epoch (100k instances) takes ~25 s with 16-mixed precision.
"""
import argparse
import os

import torch

from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint, RichModelSummary
from lightning.pytorch.loggers import CSVLogger, WandbLogger

from rl4co.envs import TSPEnv
from rl4co.envs.routing.tsp.generator import TSPGenerator
from rl4co.models import AttentionModel, AttentionModelPolicy
from rl4co.utils.trainer import RL4COTrainer


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num_loc", type=int, default=50)
    p.add_argument("--batch_size", type=int, default=512)
    p.add_argument("--train_data_size", type=int, default=100_000)
    p.add_argument("--val_data_size", type=int, default=10_000)
    p.add_argument("--test_data_size", type=int, default=10_000)
    p.add_argument("--max_epochs", type=int, default=100)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--embed_dim", type=int, default=128)
    p.add_argument("--num_encoder_layers", type=int, default=3)
    p.add_argument("--devices", type=int, default=1, help="number of GPUs")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--wandb", action="store_true")
    p.add_argument("--compile", action="store_true", help="torch.compile the policy (PyTorch >= 2.0)")
    p.add_argument("--ckpt", type=str, default=None, help="resume from this Lightning checkpoint")
    p.add_argument("--out_dir", type=str, default="runs/am-tsp")
    return p.parse_args()


@torch.no_grad()
def greedy_tours(policy, env, td, device):
    """Roll out `policy` greedily on a copy of `td`; returns rewards and actions on the CPU."""
    policy.eval()
    out = policy(td.clone().to(device), env, phase="test", decode_type="greedy", return_actions=True)
    return out["reward"].cpu(), out["actions"].cpu()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    os.makedirs(args.out_dir, exist_ok=True)

    generator = TSPGenerator(num_loc=args.num_loc, loc_distribution="uniform")
    env = TSPEnv(generator)

    policy = AttentionModelPolicy(
        env_name=env.name,
        embed_dim=args.embed_dim,
        num_encoder_layers=args.num_encoder_layers,
        num_heads=8,
    )
    if args.compile:
        policy = torch.compile(policy, mode="reduce-overhead")

    model = AttentionModel(
        env,
        policy=policy,
        baseline="rollout",
        batch_size=args.batch_size,
        train_data_size=args.train_data_size,
        val_data_size=args.val_data_size,
        test_data_size=args.test_data_size,
        optimizer_kwargs={"lr": args.lr},
    )

    # Greedy rollouts over the untrained policy, same 3 instances before and after training
    td_init = env.reset(batch_size=[3])
    rewards_untrained, _ = greedy_tours(model.policy.to(device), env, td_init, device)
    print("Untrained tour lengths:", [f"{-r:.3f}" for r in rewards_untrained.tolist()])

    checkpoint_callback = ModelCheckpoint(
        dirpath=os.path.join(args.out_dir, "checkpoints"),
        filename="epoch_{epoch:03d}",
        save_top_k=1,
        save_last=True,
        monitor="val/reward",
        mode="max",
    )
    callbacks = [checkpoint_callback, RichModelSummary(max_depth=3), LearningRateMonitor("epoch")]
    if args.wandb:
        logger = WandbLogger(project="rl4co", name=f"am-tsp{args.num_loc}")
    else:
        logger = CSVLogger(args.out_dir, name="logs")

    trainer = RL4COTrainer(
        max_epochs=args.max_epochs,
        accelerator="gpu",
        devices=args.devices,
        precision="16-mixed",
        logger=logger,
        callbacks=callbacks,
    )
    trainer.fit(model, ckpt_path=args.ckpt)
    trainer.test(model)

    # Reload the best checkpoint for the final comparison (baseline not needed for inference)
    best = AttentionModel.load_from_checkpoint(
        checkpoint_callback.best_model_path, map_location="cuda", load_baseline=False
    )
    rewards_trained, actions = greedy_tours(best.policy.to(device), env, td_init, device)
    print("Trained tour lengths:  ", [f"{-r:.3f}" for r in rewards_trained.tolist()])
    for i in range(3):
        print(f"  instance {i}: {(-rewards_untrained[i]):.3f} -> {(-rewards_trained[i]):.3f}")
        env.render(td_init[i], actions[i])

    torch.save(best.policy.state_dict(), os.path.join(args.out_dir, "am_policy.pt"))


if __name__ == "__main__":
    main()
