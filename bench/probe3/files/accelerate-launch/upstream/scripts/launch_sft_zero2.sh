#!/usr/bin/env bash
# Single-node LoRA / full SFT launcher: accelerate + DeepSpeed ZeRO-2.
#
# Usage:
#   GPU_IDS=0,1,2,3 MODEL=Qwen/Qwen2-7B bash scripts/launch_sft_zero2.sh
#   GPU_IDS=4,5,6,7 MODEL=internlm/internlm2-7b OUTPUT_DIR=out/internlm2 bash scripts/launch_sft_zero2.sh
#
# The first four cards of the shared box are usually taken by the eval service, hence the default.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(dirname "${SCRIPT_DIR}")"
cd "${REPO_ROOT}"

MODEL=${MODEL:-Qwen/Qwen2-7B}
DATASET=${DATASET:-tatsu-lab/alpaca}
OUTPUT_DIR=${OUTPUT_DIR:-out/$(basename "${MODEL}")-lora}
GPU_IDS=${GPU_IDS:-4,5,6,7}
PORT=${PORT:-29501}
MICRO_BS=${MICRO_BS:-4}
GRAD_ACC=${GRAD_ACC:-8}
LR=${LR:-2e-4}
EPOCHS=${EPOCHS:-3}
MAX_LEN=${MAX_LEN:-2048}

NUM_GPUS=$(echo "${GPU_IDS}" | tr ',' '\n' | wc -l)

# ----------------------------------------------------------------------------
# runtime environment
# ----------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=8
export WANDB_PROJECT=${WANDB_PROJECT:-sft}
export HF_HUB_ENABLE_HF_TRANSFER=1

mkdir -p "${OUTPUT_DIR}" logs

# ----------------------------------------------------------------------------
# dependencies (idempotent)
# ----------------------------------------------------------------------------
python -m pip install -q -r requirements.txt
python -m pip install -q flash-attn==2.5.8 --no-build-isolation

# ----------------------------------------------------------------------------
# sanity checks
# ----------------------------------------------------------------------------
python - <<'PY'
import torch
assert torch.cuda.is_available(), "no GPU visible"
print("devices:", torch.cuda.device_count(), torch.cuda.get_device_name(0))
PY
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

# ----------------------------------------------------------------------------
# accelerate config (written each run so the process count tracks GPU_IDS)
# ----------------------------------------------------------------------------
ACC_CFG="${OUTPUT_DIR}/accelerate_zero2.yaml"
cat > "${ACC_CFG}" <<EOF
compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  gradient_accumulation_steps: ${GRAD_ACC}
  gradient_clipping: 1.0
  offload_optimizer_device: none
  offload_param_device: none
  zero3_init_flag: false
  zero_stage: 2
distributed_type: DEEPSPEED
downcast_bf16: 'no'
gpu_ids: all
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: ${NUM_GPUS}
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
EOF

# ----------------------------------------------------------------------------
# train
# ----------------------------------------------------------------------------
LOG="logs/$(basename "${OUTPUT_DIR}")-$(date +%Y%m%d-%H%M%S).log"
echo "[launch] ${NUM_GPUS} processes on cards ${GPU_IDS}; log -> ${LOG}"

accelerate launch \
    --config_file "${ACC_CFG}" \
    --main_process_port "${PORT}" \
    examples/sft/train_lora.py \
    --model_name_or_path "${MODEL}" \
    --dataset_name "${DATASET}" \
    --output_dir "${OUTPUT_DIR}" \
    --max_seq_length "${MAX_LEN}" \
    --per_device_train_batch_size "${MICRO_BS}" \
    --gradient_accumulation_steps "${GRAD_ACC}" \
    --learning_rate "${LR}" \
    --num_train_epochs "${EPOCHS}" \
    --lr_scheduler_type cosine \
    --warmup_ratio 0.03 \
    --logging_steps 10 \
    --save_strategy steps \
    --save_steps 500 \
    --save_total_limit 3 \
    --gradient_checkpointing True \
    --bf16 True \
    --tf32 True \
    --use_flash_attn \
    --report_to wandb \
    2>&1 | tee "${LOG}"

# ----------------------------------------------------------------------------
# post: quick generation smoke test on card 0 of the set
# ----------------------------------------------------------------------------
FIRST_CARD=$(echo "${GPU_IDS}" | cut -d, -f1)
CUDA_VISIBLE_DEVICES=${FIRST_CARD} python scripts/smoke_generate.py \
    --base "${MODEL}" --adapter "${OUTPUT_DIR}" --device cuda:0 \
    --prompt "Give three tips for staying healthy."

echo "[launch] done: ${OUTPUT_DIR}"
