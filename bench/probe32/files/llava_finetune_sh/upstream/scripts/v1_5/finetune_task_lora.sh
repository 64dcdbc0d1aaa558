#!/bin/bash
# Fine-tune LLaVA-1.5 with LoRA on a custom task dataset (ZeRO-3, bf16).
#
#   bash scripts/v1_5/finetune_task_lora.sh                 # all GPUs of this node
#   bash scripts/v1_5/finetune_task_lora.sh 4               # first 4 GPUs
#
# Needs ~4x A100 80GB for the 13B model at batch 16 (reduce per_device_train_batch_size otherwise).

set -euo pipefail

NUM_GPUS=${1:-$(nvidia-smi --list-gpus | wc -l)}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS-1)))}

# NVLink inside the node, InfiniBand across nodes
export NCCL_P2P_LEVEL=NVL
export NCCL_IB_DISABLE=0
export NCCL_DEBUG=WARN

MODEL_PATH=${MODEL_PATH:-liuhaotian/llava-v1.5-13b}
DATA_PATH=${DATA_PATH:-./playground/data/llava_v1_5_mix665k.json}
IMAGE_FOLDER=${IMAGE_FOLDER:-./playground/data}
OUTPUT_DIR=${OUTPUT_DIR:-./checkpoints/llava-v1.5-13b-task-lora}

echo "Training on ${NUM_GPUS} GPU(s): ${CUDA_VISIBLE_DEVICES}"

deepspeed --num_gpus "${NUM_GPUS}" llava/train/train.py \
    --lora_enable True --lora_r 128 --lora_alpha 256 --mm_projector_lr 2e-5 \
    --deepspeed ./scripts/zero3.json \
    --model_name_or_path "${MODEL_PATH}" \
    --version v1 \
    --data_path "${DATA_PATH}" \
    --image_folder "${IMAGE_FOLDER}" \
    --vision_tower openai/clip-vit-large-patch14-336 \
    --mm_projector_type mlp2x_gelu \
    --mm_vision_select_layer -2 \
    --mm_use_im_start_end False \
    --mm_use_im_patch_token False \
    --image_aspect_ratio pad \
    --group_by_modality_length True \
    --bf16 True \
    --output_dir "${OUTPUT_DIR}" \
    --num_train_epochs 1 \
    --per_device_train_batch_size 16 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 50000 \
    --save_total_limit 1 \
    --learning_rate 2e-4 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --dataloader_num_workers 4 \
    --lazy_preprocess True \
    --report_to wandb
