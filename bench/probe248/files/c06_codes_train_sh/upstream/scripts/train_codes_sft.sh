#!/bin/bash
# Supervised fine-tuning of CodeS on Spider / BIRD text-to-SQL data.
#   bash scripts/train_codes_sft.sh 7b spider
set -e

SIZE=${1:-7b}
DATASET=${2:-spider}

# GPUs 0-3 are reserved for the demo service on our shared box
export CUDA_VISIBLE_DEVICES=4,5,6,7
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=8

if [ "$SIZE" = "1b" ] || [ "$SIZE" = "3b" ]; then
    ACC_CONFIG=./configs/accelerate_config_multi_gpu.yaml
    BS=8
    BLOCK=4096
else
    ACC_CONFIG=./configs/accelerate_config_zero3.yaml
    BS=4
    BLOCK=4096
fi

if [ "$DATASET" = "spider" ]; then
    DATA=./data/sft_spider_train_text2sql.json
    EPOCHS=4
elif [ "$DATASET" = "bird" ]; then
    DATA=./data/sft_bird_with_evidence_train_text2sql.json
    EPOCHS=4
else
    echo "unknown dataset $DATASET"; exit 1
fi

accelerate launch --multi_gpu --num_processes 4 --config_file $ACC_CONFIG train_causallm.py \
    --per_device_train_batch_size $BS \
    --block_size $BLOCK \
    --seed 42 \
    --pretrained_model_name_or_path seeklhy/codes-$SIZE \
    --epochs $EPOCHS \
    --lr 5e-6 \
    --warmup_ratio 0.05 \
    --checkpointing_steps 100000 \
    --tensorboard_log_dir ./train_logs/codes-$SIZE-$DATASET \
    --mode sft \
    --output_ckpt_dir ./ckpts/codes-$SIZE-$DATASET \
    --text2sql_data_dir $DATA \
    --table_num 6 \
    --column_num 10 \
    --use_flash_attention
