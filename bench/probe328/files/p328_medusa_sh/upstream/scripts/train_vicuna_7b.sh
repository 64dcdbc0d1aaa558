#!/bin/bash
# Train Medusa-1 heads on top of a frozen Vicuna-7B.
# Tested on 4x A100-80GB (second half of an 8-GPU node), ~5h for 2 epochs on ShareGPT.
#
# Usage: bash scripts/train_vicuna_7b.sh [medusa_num_heads] [lr]
set -e

MEDUSA_HEADS=${1:-3}
LR=${2:-1e-3}

export CUDA_VISIBLE_DEVICES=4,5,6,7
# This box has no NVLink between the two halves; P2P over PCIe hangs with NCCL 2.18
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export WANDB_PROJECT=medusa
export TOKENIZERS_PARALLELISM=false

MODEL=lmsys/vicuna-7b-v1.3
DATA=ShareGPT_Vicuna_unfiltered/ShareGPT_V4.3_unfiltered_cleaned_split.json
OUT=checkpoints/vicuna7b

# one process per visible GPU
NGPUS=$(nvidia-smi -L | wc -l)
if [ -n "$CUDA_VISIBLE_DEVICES" ]; then
    NGPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
fi
echo "Launching on ${NGPUS} GPUs: heads=${MEDUSA_HEADS} lr=${LR}"

torchrun --nproc_per_node=${NGPUS} --master_port=29511 medusa/train/train_legacy.py \
    --model_name_or_path ${MODEL} \
    --data_path ${DATA} \
    --bf16 True \
    --output_dir ${OUT} \
    --num_train_epochs 2 \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 8 \
    --gradient_accumulation_steps 4 \
    --evaluation_strategy "no" \
    --save_strategy "no" \
    --learning_rate ${LR} \
    --weight_decay 0.0 \
    --warmup_ratio 0.1 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 2048 \
    --lazy_preprocess True \
    --medusa_num_heads ${MEDUSA_HEADS} \
    --medusa_num_layers 1 \
    --report_to wandb

echo "done; heads saved under ${OUT}_medusa_mlp_*"
