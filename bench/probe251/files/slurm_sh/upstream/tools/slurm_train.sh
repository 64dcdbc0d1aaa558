#!/usr/bin/env bash
# Multi-node training on the lab's Slurm cluster.
#   sbatch tools/slurm_train.sh configs/vitl14_lora.yaml
# or interactively:
#   GPUS=16 bash tools/slurm_train.sh configs/vitl14_lora.yaml
#SBATCH --job-name=clipdet
#SBATCH --partition=gpu-a100
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=64
#SBATCH --mem=480G
#SBATCH --time=48:00:00
#SBATCH --output=logs/%x-%j.out

set -x

CFG=${1:-configs/vitl14_lora.yaml}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
PY_ARGS=${@:2}

module load cuda/11.7 cudnn/8.5 nccl/2.14
source ~/miniconda3/etc/profile.d/conda.sh
conda activate fakedetect

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$((20000 + SLURM_JOB_ID % 10000))
export OMP_NUM_THREADS=8

# InfiniBand fabric; fall back to TCP on the ethernet nodes
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5
export NCCL_DEBUG=INFO
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0

srun --kill-on-bad-exit=1 \
    torchrun \
    --nnodes="${SLURM_NNODES}" \
    --nproc_per_node="${GPUS_PER_NODE}" \
    --rdzv_id="${SLURM_JOB_ID}" \
    --rdzv_backend=c10d \
    --rdzv_endpoint="${MASTER_ADDR}:${MASTER_PORT}" \
    scripts/train_clip_probe.py --cfg "${CFG}" ${PY_ARGS}
