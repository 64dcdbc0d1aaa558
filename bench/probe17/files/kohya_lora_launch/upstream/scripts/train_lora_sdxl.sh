#!/usr/bin/env bash
# LoRA training for SDXL with sd-scripts (kohya-ss) on one 8-GPU node.
# Usage: bash scripts/train_lora_sdxl.sh /data/my_dataset.toml my_lora
set -euo pipefail

DATASET_CONFIG=${1:-"./dataset/config.toml"}
OUTPUT_NAME=${2:-"sdxl_lora"}
MODEL=${MODEL:-"stabilityai/stable-diffusion-xl-base-1.0"}
OUTPUT_DIR=${OUTPUT_DIR:-"./output"}

# ---- environment -------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=8

NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "Found ${NUM_GPUS} GPUs"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

# ---- sanity checks -------------------------------------------------------------
python -c "import torch; assert torch.cuda.is_available(), 'no GPU visible'; print(torch.version.cuda)"
python -c "import xformers, bitsandbytes; print('xformers', xformers.__version__, 'bnb', bitsandbytes.__version__)"

mkdir -p "${OUTPUT_DIR}" logs

# ---- training ------------------------------------------------------------------
accelerate launch \
  --config_file config/accelerate_multi_gpu.yaml \
  --num_processes "${NUM_GPUS}" \
  --num_cpu_threads_per_process 1 \
  sdxl_train_network.py \
  --pretrained_model_name_or_path "${MODEL}" \
  --dataset_config "${DATASET_CONFIG}" \
  --output_dir "${OUTPUT_DIR}" \
  --output_name "${OUTPUT_NAME}" \
  --save_model_as safetensors \
  --network_module networks.lora \
  --network_dim 32 \
  --network_alpha 16 \
  --learning_rate 1e-4 \
  --unet_lr 1e-4 \
  --text_encoder_lr 5e-5 \
  --lr_scheduler cosine_with_restarts \
  --lr_warmup_steps 100 \
  --max_train_epochs 10 \
  --train_batch_size 4 \
  --gradient_checkpointing \
  --mixed_precision bf16 \
  --save_precision fp16 \
  --optimizer_type AdamW8bit \
  --xformers \
  --cache_latents \
  --cache_text_encoder_outputs \
  --no_half_vae \
  --seed 42 \
  --logging_dir logs \
  --log_with tensorboard \
  2>&1 | tee "logs/${OUTPUT_NAME}.log"

# peak memory summary for the report
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader
