#!/bin/bash
# Train the ImageReward reward model on one node.
# Usage: GPU_IDS=0,1,2,3 bash scripts/train_one_node.sh

export CUDA_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3,4,5,6,7}
GPUS_PER_NODE=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)
MASTER_PORT=${MASTER_PORT:-29500}

cd "$(dirname "$0")/../src" || exit 1

python -m torch.distributed.launch --nproc_per_node=$GPUS_PER_NODE --master_port=$MASTER_PORT train.py \
    --config config/config.yaml \
    --savepath blip_uni_cross_mul \
    --batch_size 64 \
    --accumulation_steps 4 \
    --gpu_num $GPUS_PER_NODE \
    --epochs 10 \
    --lr-decay-style cosine \
    --warmup 0.0 \
    --fix_rate 0.7 \
    --valid_per_epoch 4 \
    --rank_pair \
    --std_log
