#!/bin/bash
# Multi-GPU training of the ToothFairy segmentation network with torchrun.
# usage: bash scripts/train_ddp.sh configs/gen-training-unet-trainval.yaml 0,1,2,3

CONFIG=${1:-configs/gen-training-unet-trainval.yaml}
GPUS=${2:-0,1}
NGPU=$(echo $GPUS | tr ',' '\n' | wc -l)
PORT=${PORT:-29501}

source ~/miniconda3/etc/profile.d/conda.sh
conda activate maxillo

export CUDA_VISIBLE_DEVICES=$GPUS
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=1

echo "=== $(date) launching on GPUs $GPUS ($NGPU processes) ==="
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

mkdir -p logs
torchrun --nproc_per_node=$NGPU --master_port=$PORT main.py \
    --config $CONFIG 2>&1 | tee logs/train_$(date +%Y%m%d_%H%M%S).log
