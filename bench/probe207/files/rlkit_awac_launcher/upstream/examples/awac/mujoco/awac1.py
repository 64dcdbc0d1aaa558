"""
AWAC on the D4RL/MuJoCo offline datasets, then online fine-tuning.

Local GPU run:
    python examples/awac/mujoco/awac1.py --env HalfCheetah-v2 --gpu 0
"""
import argparse
import os
import random

import numpy as np
import torch

import rlkit.util.hyperparameter as hyp
import rlkit.torch.pytorch_util as ptu
from rlkit.launchers.launcher_util import run_experiment, setup_logger
from rlkit.launchers.experiments.awac.awac_rl import experiment, process_args
from rlkit.torch.sac.policies import GaussianPolicy
from rlkit.torch.networks import Clamp


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--env", type=str, default="HalfCheetah-v2")
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--exp_prefix", type=str, default="awac-mujoco")
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--mode", type=str, default="local")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    # pin this process to one card before rlkit touches torch.cuda
    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)

    variant = dict(
        num_epochs=1001,
        num_eval_steps_per_epoch=1000,
        num_trains_per_train_loop=1000,
        num_expl_steps_per_train_loop=1000,
        min_num_steps_before_training=1000,
        max_path_length=1000,
        batch_size=1024,
        replay_buffer_size=int(2E6),
        layer_size=256,
        num_layers=2,
        algorithm="AWAC",
        version="normal",
        collection_mode="batch",

        policy_class=GaussianPolicy,
        policy_kwargs=dict(
            hidden_sizes=[256] * 4,
            max_log_std=0,
            min_log_std=-6,
            std_architecture="values",
        ),
        qf_kwargs=dict(
            hidden_sizes=[256, 256],
            output_activation=Clamp(max=0),
        ),

        trainer_kwargs=dict(
            discount=0.99,
            soft_target_tau=5e-3,
            target_update_period=1,
            policy_lr=3E-4,
            qf_lr=3E-4,
            reward_scale=1,
            beta=1,
            use_automatic_entropy_tuning=False,
            alpha=0,
            compute_bc=False,

            bc_num_pretrain_steps=0,
            q_num_pretrain1_steps=0,
            q_num_pretrain2_steps=25000,
            policy_weight_decay=1e-4,
            q_weight_decay=0,
            bc_loss_type="mse",

            rl_weight=1.0,
            use_awr_update=True,
            use_reparam_update=False,
            reparam_weight=0.0,
            awr_weight=0.0,
            bc_weight=1.0,

            post_bc_pretrain_hyperparams=dict(
                bc_weight=0.0,
                compute_bc=False,
            ),

            reward_transform_kwargs=None,  # r' = r + 1
            terminal_transform_kwargs=None,  # t = 0
        ),
        launcher_config=dict(
            num_exps_per_instance=1,
            region="us-west-2",
        ),

        path_loader_class=None,
        path_loader_kwargs=dict(
            obs_key="state_observation",
            demo_paths=[
                dict(
                    path="demos/icml2020/mujoco/%s_action_noise_1000.npy" % args.env.split("-")[0].lower(),
                    obs_dict=False,
                    is_demo=True,
                ),
                dict(
                    path="demos/icml2020/mujoco/%s_off_policy_100.npy" % args.env.split("-")[0].lower(),
                    obs_dict=False,
                    is_demo=False,
                    train_split=0.9,
                ),
            ],
        ),
        add_env_demos=False,
        add_env_offpolicy_data=False,

        load_demos=True,
        pretrain_policy=True,
        pretrain_rl=True,
    )

    search_space = {
        "env": [args.env],
        "trainer_kwargs.beta": [2],
        "seedid": args.seeds,
    }

    sweeper = hyp.DeterministicHyperparameterSweeper(
        search_space, default_parameters=variant,
    )

    ptu.set_gpu_mode(True)  # CUDA_VISIBLE_DEVICES already points at args.gpu
    for exp_id, variant in enumerate(sweeper.iterate_hyperparameters()):
        seed = variant["seedid"]
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        process_args(variant)
        run_experiment(
            experiment,
            exp_prefix=args.exp_prefix,
            mode=args.mode,
            variant=variant,
            use_gpu=True,
            gpu_id=0,
            exp_id=exp_id,
            snapshot_mode="gap_and_last",
            snapshot_gap=200,
        )
