#!/usr/bin/env bash
# Single-node Llama-3-8B SFT comparison run (8x A100 80GB).
#   bash run_llama.sh            # with Liger kernels
#   USE_LIGER=False bash run_llama.sh
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_P2P_LEVEL=NVL
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export TOKENIZERS_PARALLELISM=false
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/triton-cache-$USER}

USE_LIGER=${USE_LIGER:-True}
NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
OUTPUT_DIR=${OUTPUT_DIR:-/shared/public/sft/llama3-8b-liger-${USE_LIGER}}

echo "launching on ${NUM_GPUS} GPUs, liger=${USE_LIGER}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

torchrun --nnodes=1 --nproc-per-node="${NUM_GPUS}" training.py \
    --bf16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 1 \
    --eval_strategy "no" \
    --save_strategy "no" \
    --learning_rate 6e-6 \
    --weight_decay 0.05 \
    --warmup_ratio 0.1 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --include_num_input_tokens_seen \
    --report_to none \
    --optim adamw_torch_fused \
    --fsdp "full_shard auto_wrap" \
    --fsdp_config config/fsdp_config.json \
    --seed 42 \
    --use_liger "${USE_LIGER}" \
    --attn_implementation flash_attention_2 \
    --dataloader_pin_memory True \
    --output_dir "${OUTPUT_DIR}"
