#!/bin/bash
#SBATCH --job-name=tdmpc2
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=10
#SBATCH --mem=64G
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x_%j.out
#SBATCH --error=logs/%x_%j.err
#
# Usage: sbatch scripts/slurm_train.sh <task> <model_size> <seed>
#   e.g. sbatch scripts/slurm_train.sh dog-run 5 1

TASK=${1:-dog-run}
MODEL_SIZE=${2:-5}
SEED=${3:-1}

module purge
module load anaconda3/2023.09
module load cuda/12.4

source activate tdmpc2

# Headless MuJoCo rendering for video logging
export MUJOCO_GL=egl
export PYOPENGL_PLATFORM=egl
export MUJOCO_EGL_DEVICE_ID=${SLURM_LOCALID:-0}

# Slurm exports the allocated GPU in CUDA_VISIBLE_DEVICES; keep the first one only
export CUDA_VISIBLE_DEVICES=$(echo ${CUDA_VISIBLE_DEVICES:-0} | cut -d, -f1)

export WANDB_MODE=online
export HYDRA_FULL_ERROR=1

echo "Host: $(hostname)  Job: ${SLURM_JOB_ID}"
nvidia-smi

cd $SLURM_SUBMIT_DIR/tdmpc2
srun python train.py \
  task=${TASK} \
  model_size=${MODEL_SIZE} \
  seed=${SEED} \
  steps=10_000_000 \
  compile=true \
  enable_wandb=true \
  save_video=true \
  exp_name=slurm_${SLURM_JOB_ID}
