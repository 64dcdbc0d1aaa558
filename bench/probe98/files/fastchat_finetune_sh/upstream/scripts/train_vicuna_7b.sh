#!/bin/bash
# Fine-tune Vicuna-7B on one node of 8x A100 (80GB) with FSDP and the FlashAttention
# monkey patch (fastchat/train/train_mem.py calls replace_llama_attn_with_flash_attn()).
#
#   bash scripts/train_vicuna_7b.sh /path/to/llama-7b data/sharegpt_clean_split.json
#
# Memory: ~60GB per GPU at model_max_length=2048, per_device_train_batch_size=2.
set -euo pipefail
set -x

MODEL_PATH=${1:-"meta-llama/Llama-2-7b-hf"}
DATA_PATH=${2:-"data/dummy_conversation.json"}
OUTPUT_DIR=${OUTPUT_DIR:-"output_vicuna_7b"}
MASTER_PORT=${MASTER_PORT:-20001}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_P2P_LEVEL=NVL
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=${WANDB_PROJECT:-vicuna}

NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
GLOBAL_BATCH=128
PER_DEVICE_BATCH=2
GRAD_ACC=$((GLOBAL_BATCH / (PER_DEVICE_BATCH * NUM_GPUS)))

mkdir -p "${OUTPUT_DIR}"

torchrun --nproc_per_node=${NUM_GPUS} --master_port=${MASTER_PORT} fastchat/train/train_mem.py \
    --model_name_or_path "${MODEL_PATH}" \
    --data_path "${DATA_PATH}" \
    --bf16 True \
    --output_dir "${OUTPUT_DIR}" \
    --num_train_epochs 3 \
    --per_device_train_batch_size ${PER_DEVICE_BATCH} \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps ${GRAD_ACC} \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 1200 \
    --save_total_limit 10 \
    --learning_rate 2e-5 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --fsdp "full_shard auto_wrap" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --lazy_preprocess True \
    2>&1 | tee "${OUTPUT_DIR}/train.log"

# Print the GPU memory high-water mark reported by the driver for the record.
nvidia-smi --query-gpu=index,memory.used --format=csv || true
