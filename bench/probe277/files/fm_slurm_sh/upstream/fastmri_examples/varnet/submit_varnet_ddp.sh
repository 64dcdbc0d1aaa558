#!/bin/bash
#SBATCH --job-name=varnet_knee
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=10
#SBATCH --mem=480G
#SBATCH --time=72:00:00
#SBATCH --partition=learnfair
#SBATCH --output=logs/%x_%j.out
#SBATCH --error=logs/%x_%j.err
#
# E2E-VarNet leaderboard config: 12 cascades, 32 GPUs (4 nodes x 8 V100-32GB),
# batch size 1 per GPU. Lightning picks up SLURM_* variables and sets up DDP
# itself, so we launch one task per GPU with srun.

module purge
module load anaconda3/2022.05 cuda/11.8 cudnn/v8.6 nccl/2.15
source activate fastmri

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500

# NCCL over InfiniBand; the ethernet interface is only for the TCP store
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_HCA=mlx5
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8

NUM_CASCADES=12
DATA_PATH=/datasets01/fastMRI/knee
LOG_DIR=/checkpoint/${USER}/varnet/knee_${SLURM_JOB_ID}

mkdir -p logs "${LOG_DIR}"

srun python train_varnet_demo.py \
    --mode train \
    --challenge multicoil \
    --data_path "${DATA_PATH}" \
    --default_root_dir "${LOG_DIR}" \
    --mask_type equispaced_fraction \
    --center_fractions 0.08 0.04 \
    --accelerations 4 8 \
    --num_cascades ${NUM_CASCADES} \
    --accelerator gpu \
    --devices 8 \
    --num_nodes ${SLURM_NNODES} \
    --strategy ddp \
    --max_epochs 50
