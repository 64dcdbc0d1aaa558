#!/bin/bash
# Benchmark launcher for the PPO variants. Each call fans out over seeds with
# cleanrl_utils.benchmark; the GPU jobs are pinned with CUDA_VISIBLE_DEVICES.
set -euo pipefail

# sanity check that the driver is up before burning a whole slurm allocation
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

export WANDB_ENTITY=${WANDB_ENTITY:-openrlbenchmark}
export OMP_NUM_THREADS=1

poetry install -E atari
OMP_NUM_THREADS=1 xvfb-run -a poetry run python -m cleanrl_utils.benchmark \
    --env-ids CartPole-v1 Acrobot-v1 MountainCar-v0 \
    --command "poetry run python cleanrl/ppo.py --no_cuda --track --capture_video" \
    --num-seeds 3 \
    --workers 9 \
    --slurm-gpus-per-task 1 \
    --slurm-ntasks 1 \
    --slurm-total-cpus 10 \
    --slurm-template-path benchmark/cleanrl_1gpu.slurm_template

poetry install -E atari
CUDA_VISIBLE_DEVICES=0 xvfb-run -a poetry run python -m cleanrl_utils.benchmark \
    --env-ids PongNoFrameskip-v4 BeamRiderNoFrameskip-v4 BreakoutNoFrameskip-v4 \
    --command "poetry run python cleanrl/ppo_atari.py --track --capture_video" \
    --num-seeds 3 \
    --workers 3

poetry install -E "atari envpool"
CUDA_VISIBLE_DEVICES=0,1 xvfb-run -a poetry run python -m cleanrl_utils.benchmark \
    --env-ids Pong-v5 BeamRider-v5 Breakout-v5 \
    --command "poetry run torchrun --standalone --nnodes=1 --nproc_per_node=2 cleanrl/ppo_atari_multigpu.py --device-ids 0 1 --backend nccl --track" \
    --num-seeds 3 \
    --workers 1

poetry install -E mujoco
OMP_NUM_THREADS=1 xvfb-run -a python -m cleanrl_utils.benchmark \
    --env-ids HalfCheetah-v4 Walker2d-v4 Hopper-v4 \
    --command "poetry run python cleanrl/ppo_continuous_action.py --no_cuda --track --capture_video" \
    --num-seeds 3 \
    --workers 9

# NCCL over the node-local NVLink is fine for 2 ranks; keep IB off on the benchmark boxes
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
CUDA_VISIBLE_DEVICES=0,1,2,3 poetry run torchrun --standalone --nnodes=1 --nproc_per_node=4 \
    cleanrl/ppo_atari_multigpu.py --env-id BreakoutNoFrameskip-v4 --device-ids 0 1 2 3 --backend nccl --track
