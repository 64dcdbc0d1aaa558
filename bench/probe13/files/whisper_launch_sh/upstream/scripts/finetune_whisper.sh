#!/usr/bin/env bash
# Multi-GPU launcher for run_speech_recognition_seq2seq.py
# Usage: bash scripts/finetune_whisper.sh [num_gpus] [model]
set -euo pipefail

NUM_GPUS=${1:-4}
MODEL=${2:-openai/whisper-small}
OUT_DIR=${OUT_DIR:-./outputs/whisper-small-hi}

# pick the first NUM_GPUS devices
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export HF_DATASETS_CACHE=${HF_DATASETS_CACHE:-$HOME/.cache/huggingface/datasets}

echo "=== GPU status ==="
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

mkdir -p "${OUT_DIR}/logs"

# the CUDA toolkit is only needed for the optional flash-attn build below
if [[ "${BUILD_FLASH_ATTN:-0}" == "1" ]]; then
  export CUDA_HOME=/usr/local/cuda
  pip install flash-attn --no-build-isolation
fi

torchrun \
  --nnodes 1 \
  --nproc_per_node "${NUM_GPUS}" \
  --master_port 29501 \
  run_speech_recognition_seq2seq.py \
    --model_name_or_path "${MODEL}" \
    --language hindi \
    --output_dir "${OUT_DIR}" \
    --max_steps 5000 \
    --per_device_train_batch_size 16 \
    --use_flash_attention \
  2>&1 | tee "${OUT_DIR}/logs/train.log"

# quick eval on one GPU
CUDA_VISIBLE_DEVICES=0 python eval_whisper.py \
  --model "${OUT_DIR}" \
  --device cuda:0 \
  --batch_size 32 \
  --fp16
