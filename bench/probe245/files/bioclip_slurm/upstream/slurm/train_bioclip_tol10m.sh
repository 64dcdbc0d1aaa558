#!/usr/bin/env bash
#SBATCH --job-name=bioclip-tol10m
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=10
#SBATCH --mem=0
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x-%j.out
#SBATCH --exclusive

# Train BioCLIP (ViT-B/16 from OpenAI CLIP) on TreeOfLife-10M webdataset shards
# with the mixed taxonomic text objective. 16 x A100-80GB, ~100 epochs.

set -e

module purge
module load cuda/11.8 cudnn/8.9 nccl/2.18
source ~/miniconda3/etc/profile.d/conda.sh
conda activate bioclip

export MASTER_PORT=$(( 12000 + RANDOM % 20000 ))
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)

# NCCL over InfiniBand; the ethernet interface name differs per cluster
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5
export NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_DEVICE_MAX_CONNECTIONS=1

export OMP_NUM_THREADS=8
export PYTHONPATH="$PYTHONPATH:$PWD/src"

DATA=/fs/scratch/treeoflife-10m/shards
VAL=/fs/scratch/rare-species/val

srun --cpu_bind=v --accel-bind=gn python -u src/training/main.py \
    --train-data "${DATA}/shard-{000000..000159}.tar" \
    --val-data "${VAL}/shard-{000000..000003}.tar" \
    --dataset-type webdataset \
    --train-num-samples 10436521 \
    --taxonomic-text-type mixed \
    --model ViT-B-16 \
    --pretrained openai \
    --batch-size 256 \
    --accum-freq 1 \
    --lr 1e-4 \
    --wd 0.2 \
    --warmup 1000 \
    --epochs 100 \
    --precision amp \
    --workers 8 \
    --local-loss \
    --gather-with-grad \
    --grad-checkpointing \
    --dist-backend nccl \
    --log-every-n-steps 20 \
    --report-to wandb \
    --save-frequency 5 \
    --name "bioclip-vitb16-tol10m-${SLURM_JOB_ID}"
