#!/bin/bash -x
#SBATCH --job-name=hpsv2
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=12
#SBATCH --output=logs/%x_%j.out
#SBATCH --exclusive

# HPS v2 fine-tuning of OpenCLIP ViT-H-14 on HPD v2 (4 nodes x 8 GPUs).

eval "$(/opt/conda/bin/conda shell.bash hook)"
conda activate hpsv2

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export MASTER_PORT=12802
master_addr=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR=$master_addr

cd ${HPS_ROOT:-$HOME/HPSv2}
export PYTHONPATH="$PYTHONPATH:$PWD"

srun --cpu_bind=v --accel-bind=gn python -u hpsv2/src/training/main.py \
    --save-frequency 500 \
    --report-to tensorboard \
    --train-data datasets/HPDv2/train.json \
    --val-data datasets/HPDv2/test.json \
    --train-folder datasets/HPDv2/train \
    --dataset-type HPD \
    --batch-size 16 \
    --accum-freq 1 \
    --lr 3.3e-6 \
    --wd 0.35 \
    --warmup 500 \
    --iterations 4000 \
    --precision amp \
    --model ViT-H-14 \
    --pretrained laion2B-s32B-b79K \
    --lock-text \
    --lock-image \
    --lock-image-unlocked-groups 20 \
    --logit-scale 100 \
    --workers 4 \
    --grad-checkpointing \
    --light-augmentation
