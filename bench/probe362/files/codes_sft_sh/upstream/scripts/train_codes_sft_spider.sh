#!/bin/bash
# Supervised fine-tuning of CodeS-7B on Spider (8 x A800 80GB, ZeRO-3, bf16).

set -e

LLM_PATH=seeklhy/codes-7b
OUTPUT_DIR=./ckpts/codes-7b-spider
LOG_DIR=./train_logs/codes-7b-spider

mkdir -p ${OUTPUT_DIR} ${LOG_DIR}

accelerate launch --main_process_port 10000 --config_file ./accelerate_config/accelerate_config_bf16.yaml train_causal_lm.py \
    --per_device_train_batch_size 4 \
    --block_size 4096 \
    --seed 42 \
    --pretrained_model_name_or_path ${LLM_PATH} \
    --epochs 4 \
    --lr 5e-6 \
    --warmup_ratio 0.05 \
    --checkpointing_steps 100000 \
    --tensorboard_log_dir ${LOG_DIR} \
    --mode sft \
    --output_ckpt_dir ${OUTPUT_DIR} \
    --text2sql_data_dir ./data/sft_spider_train_text2sql.json \
    --table_num 6 \
    --column_num 10 \
    --use_flash_attention

# evaluate the last checkpoint with few-shot prompting on Spider dev (single GPU)
CUDA_VISIBLE_DEVICES=0 python -u text2sql_few_shot.py \
    --llm_path ${OUTPUT_DIR}/ckpt-$(ls ${OUTPUT_DIR} | sed 's/ckpt-//' | sort -n | tail -1) \
    --sic_path ./sic_ckpts/sic_spider \
    --table_num 6 \
    --column_num 10 \
    --dataset_path ./data/sft_spider_dev_text2sql.json \
    --demonstration_set_path ./data/sft_spider_train_text2sql.json \
    --num_of_demonstrations 1 \
    --max_tokens 4096 \
    --max_new_tokens 256
