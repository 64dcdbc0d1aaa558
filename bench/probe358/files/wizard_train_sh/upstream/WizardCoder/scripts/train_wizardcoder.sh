#!/bin/bash
# Full-parameter instruction tuning of StarCoder-15B on Evol-Instruct data
# (8 x 80GB GPUs, ZeRO-3 with CPU offload for the optimizer states).
set -x

export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=0
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=wizardcoder

DATA_PATH=data/code_evol_instruct_80k.json
OUTPUT_PATH=checkpoints/wizardcoder-15b
MODEL_PATH=bigcode/starcoder

deepspeed --num_gpus 8 src/train_wizardcoder.py \
    --model_name_or_path $MODEL_PATH \
    --data_path $DATA_PATH \
    --output_dir $OUTPUT_PATH \
    --num_train_epochs 3 \
    --model_max_length 2048 \
    --per_device_train_batch_size 16 \
    --per_device_eval_batch_size 1 \
    --gradient_accumulation_steps 4 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 50 \
    --save_total_limit 2 \
    --learning_rate 2e-5 \
    --warmup_steps 30 \
    --logging_steps 2 \
    --lr_scheduler_type "cosine" \
    --report_to "tensorboard" \
    --gradient_checkpointing True \
    --deepspeed configs/deepspeed_config.json \
    --fp16 True
