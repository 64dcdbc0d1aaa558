#!/bin/bash
# Multi-node FID / FD_DINOv2 reference + sample statistics (EDM2-style calculate_metrics.py).
# Submit with: sbatch -N 2 --gpus-per-node=8 scripts/launch_dist_metrics.sh <images-dir-or-zip> <ref.pkl>
#SBATCH --job-name=fd-dinov2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=64
#SBATCH --time=04:00:00
#SBATCH --output=logs/%x-%j.out

set -e

IMAGES=${1:?images dir or zip}
REF=${2:-https://nvlabs-fi-cdn.nvidia.com/edm2/dataset-refs/img512.pkl}
NUM=${NUM:-50000}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}

module load cuda/11.8 nccl/2.18
source ~/miniconda3/etc/profile.d/conda.sh
conda activate gen-eval

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=${MASTER_PORT:-29517}
export NNODES=${SLURM_NNODES:-1}
export NODE_RANK=${SLURM_NODEID:-0}

# NCCL over InfiniBand; fall back to the front-end NIC for bootstrap
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5
export NCCL_SOCKET_IFNAME=eth0
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8
export CUDA_DEVICE_MAX_CONNECTIONS=1

echo "node $NODE_RANK/$NNODES master $MASTER_ADDR:$MASTER_PORT"
nvidia-smi -L

srun --kill-on-bad-exit=1 torchrun \
    --nnodes "$NNODES" \
    --nproc_per_node "$GPUS_PER_NODE" \
    --rdzv_backend c10d \
    --rdzv_endpoint "$MASTER_ADDR:$MASTER_PORT" \
    calculate_metrics.py calc \
        --images "$IMAGES" \
        --ref "$REF" \
        --metrics fid,fd_dinov2 \
        --num "$NUM" \
        --batch 128 \
        --workers 6
