#!/bin/bash
# LoRA fine-tune OpenVLA-7B on one LIBERO suite (single node, all local GPUs).
#
#   bash scripts/finetune_libero.sh libero_spatial_no_noops
#
# Expects the modified LIBERO RLDS datasets under $DATA_ROOT (see README "Fine-Tuning on LIBERO").
set -euo pipefail

DATASET=${1:-libero_spatial_no_noops}
DATA_ROOT=${DATA_ROOT:-/data/modified_libero_rlds}
RUN_ROOT=${RUN_ROOT:-/checkpoints/openvla-libero}
BATCH_SIZE=${BATCH_SIZE:-8}          # 8 x 8 GPUs (A100-80G) = 64 effective
GRAD_ACC=${GRAD_ACC:-1}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_P2P_LEVEL=NVL
export TF_CPP_MIN_LOG_LEVEL=3
export TOKENIZERS_PARALLELISM=false
export HF_HOME=${HF_HOME:-/cache/huggingface}

NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "Fine-tuning on ${DATASET} with ${NUM_GPUS} GPUs"

torchrun --standalone --nnodes 1 --nproc-per-node "${NUM_GPUS}" vla-scripts/finetune.py \
  --vla_path "openvla/openvla-7b" \
  --data_root_dir "${DATA_ROOT}" \
  --dataset_name "${DATASET}" \
  --run_root_dir "${RUN_ROOT}" \
  --adapter_tmp_dir "${RUN_ROOT}/adapter-tmp" \
  --lora_rank 32 \
  --batch_size "${BATCH_SIZE}" \
  --grad_accumulation_steps "${GRAD_ACC}" \
  --learning_rate 5e-4 \
  --image_aug True \
  --wandb_project openvla-libero \
  --wandb_entity my-lab \
  --save_steps 5000
