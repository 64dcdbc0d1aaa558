#!/bin/bash
#SBATCH --job-name=vit_b16_in1k
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=12
#SBATCH --mem=0
#SBATCH --time=72:00:00
#SBATCH --partition=a100
#SBATCH --output=logs/%x-%j.out
#SBATCH --exclusive

# ViT-B/16 ImageNet-1k from scratch, DeiT-III style recipe, 32 GPUs (4 nodes x 8).
# timm's init_distributed_device() picks up SLURM_PROCID / SLURM_LOCALID / SLURM_NTASKS,
# so plain `srun python train.py` is enough, no torchrun needed.

set -euo pipefail

module purge
module load gcc/11.3
module load cuda/11.8 nccl/2.18.3
source ~/miniconda3/etc/profile.d/conda.sh
conda activate timm-gpu

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=$((12000 + SLURM_JOB_ID % 20000))
export OMP_NUM_THREADS=8

# InfiniBand fabric, GPUDirect RDMA
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5
export NCCL_SOCKET_IFNAME=ib0
export NCCL_NET_GDR_LEVEL=2

DATA_DIR=/datasets/imagenet
OUT_DIR=/checkpoint/${USER}/timm
EXP=vit_base_patch16_224-deit3-${SLURM_JOB_ID}

mkdir -p logs "${OUT_DIR}"

srun --cpu-bind=none python train.py \
    --data-dir "${DATA_DIR}" \
    --config hparams/vit_base_patch16_224.in1k.yaml \
    --device cuda \
    --output "${OUT_DIR}" \
    --experiment "${EXP}" \
    --log-wandb \
    "$@"
