#!/bin/bash
# LoRA SFT of Llama-3-8B-Instruct on 4 GPUs of a single node.
# Usage: bash examples/lora_multi_gpu/single_node.sh
#
# NCCL_P2P_DISABLE / NCCL_IB_DISABLE are needed on consumer cards
# (RTX 3090/4090) where P2P over PCIe hangs; remove them on A100/H100 boxes.

set -x

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

NPROC_PER_NODE=4
MASTER_PORT=${MASTER_PORT:-29500}

MODEL_PATH=meta-llama/Meta-Llama-3-8B-Instruct
OUTPUT_DIR=saves/llama3-8b/lora/sft

torchrun \
    --nproc_per_node $NPROC_PER_NODE \
    --nnodes 1 \
    --node_rank 0 \
    --master_addr 127.0.0.1 \
    --master_port $MASTER_PORT \
    src/train.py \
    --stage sft \
    --do_train \
    --model_name_or_path $MODEL_PATH \
    --dataset alpaca_en_demo,identity \
    --dataset_dir data \
    --template llama3 \
    --finetuning_type lora \
    --lora_target all \
    --output_dir $OUTPUT_DIR \
    --overwrite_cache \
    --overwrite_output_dir \
    --cutoff_len 2048 \
    --preprocessing_num_workers 16 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps 4 \
    --lr_scheduler_type cosine \
    --logging_steps 10 \
    --warmup_ratio 0.1 \
    --save_steps 500 \
    --eval_steps 500 \
    --eval_strategy steps \
    --load_best_model_at_end \
    --learning_rate 1e-4 \
    --num_train_epochs 3.0 \
    --max_samples 1000 \
    --val_size 0.1 \
    --flash_attn fa2 \
    --ddp_timeout 180000000 \
    --plot_loss \
    --bf16
