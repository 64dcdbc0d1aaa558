#!/bin/bash
# Train Go2 rough-terrain locomotion with legged_gym + rsl_rl.
#
# Usage: bash scripts/train_go2.sh [run_name] [gpu_id] [num_envs]
#
# Isaac Gym needs a desktop-class NVIDIA GPU (RTX 3090 / 4090 / A6000 all fine);
# 4096 envs take ~9 GB of GPU memory with the rough terrain.

RUN_NAME=${1:-"go2_rough"}
GPU_ID=${2:-0}
NUM_ENVS=${3:-4096}

source ~/miniconda3/etc/profile.d/conda.sh
conda activate legged_gym

# Isaac Gym Preview 4 links against libpython from the env
export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH
export CUDA_VISIBLE_DEVICES=${GPU_ID}
export WANDB_MODE=${WANDB_MODE:-offline}

cd "$(dirname "$0")/.."

echo "[train_go2] run=${RUN_NAME} envs=${NUM_ENVS} gpu=${GPU_ID}"

python legged_gym/scripts/train.py \
    --task=go2 \
    --run_name="${RUN_NAME}" \
    --headless \
    --sim_device cuda:0 \
    --rl_device cuda:0 \
    --num_envs ${NUM_ENVS} \
    --max_iterations 5000 \
    --seed 1

# Play the latest checkpoint once training is done (needs a display)
if [ -n "$DISPLAY" ]; then
    python legged_gym/scripts/play.py --task=go2 --sim_device cuda:0 --rl_device cuda:0 --num_envs 32
fi
