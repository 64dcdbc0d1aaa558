#!/usr/bin/env bash
# Multi-GPU LoRA training of ColQwen2 (8x H100, bf16 + flash-attention-2).
#
#   bash scripts/train/launch_colqwen2.sh scripts/configs/qwen2/train_colqwen2_model.yaml
#
# Needs: pip install "colpali-engine[train]" flash-attn --no-build-isolation

CONFIG=${1:-scripts/configs/qwen2/train_colqwen2_model.yaml}
NUM_GPUS=${NUM_GPUS:-8}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_TIMEOUT=1800
export TORCH_NCCL_BLOCKING_WAIT=0
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export WANDB_PROJECT=${WANDB_PROJECT:-colpali}
export HF_HUB_ENABLE_HF_TRANSFER=1
export TOKENIZERS_PARALLELISM=false

python -c "import torch; assert torch.cuda.is_available(), 'no GPU visible'; print(torch.cuda.get_device_name(0))"

accelerate launch \
    --multi_gpu \
    --num_processes "${NUM_GPUS}" \
    --mixed_precision bf16 \
    --main_process_port 29511 \
    scripts/train/train_colbert.py "${CONFIG}"
