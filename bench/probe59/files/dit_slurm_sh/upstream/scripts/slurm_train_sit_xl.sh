#!/bin/bash
#SBATCH --job-name=sit-xl-2-256
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=96
#SBATCH --mem=0
#SBATCH --time=72:00:00
#SBATCH --exclusive
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err

# SiT-XL/2 on ImageNet 256x256, 4 nodes x 8 GPUs, torchrun under srun.
# Submit with:  sbatch scripts/slurm_train_sit_xl.sh

set -eo pipefail

module purge
module load cuda/12.1 cudnn/8.9 nccl/2.18.3
source ~/miniconda3/etc/profile.d/conda.sh
conda activate sit

# ---- networking ---------------------------------------------------------------
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_DEBUG=INFO
export NCCL_NVLS_ENABLE=0
export GLOO_SOCKET_IFNAME=ib0

# ---- runtime ------------------------------------------------------------------
export OMP_NUM_THREADS=8
export CUDA_DEVICE_MAX_CONNECTIONS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

export ENTITY=${ENTITY:-my-team}
export PROJECT=${PROJECT:-sit}

MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))
GPUS_PER_NODE=8

echo "master=${MASTER_ADDR}:${MASTER_PORT} nodes=${SLURM_NNODES} gpus/node=${GPUS_PER_NODE}"
srun --ntasks-per-node=1 nvidia-smi --query-gpu=name,memory.used --format=csv,noheader

DATA_PATH=${DATA_PATH:-/datasets/imagenet/train}
RESULTS=${RESULTS:-/checkpoints/sit}

srun --kill-on-bad-exit=1 torchrun \
    --nnodes="${SLURM_NNODES}" \
    --nproc_per_node="${GPUS_PER_NODE}" \
    --rdzv_id="${SLURM_JOB_ID}" \
    --rdzv_backend=c10d \
    --rdzv_endpoint="${MASTER_ADDR}:${MASTER_PORT}" \
    train.py \
        --model SiT-XL/2 \
        --data-path "${DATA_PATH}" \
        --results-dir "${RESULTS}" \
        --global-batch-size 256 \
        --num-workers 12 \
        --ckpt-every 50000 \
        --sample-every 10000 \
        --wandb \
        --path-type Linear \
        --prediction velocity
