#!/usr/bin/env bash
# Single-node SFT with accelerate + FSDP (8 GPUs).
#
#   bash scripts/run_sft_fsdp.sh configs/llama3_8b_sft.yaml
#
# Requires: accelerate>=0.34, flash-attn>=2.5 (see requirements.txt).
set -euo pipefail

CONFIG=${1:-configs/llama3_8b_sft.yaml}
ACCEL_CONFIG=${ACCEL_CONFIG:-configs/accelerate/fsdp_8gpu.yaml}
OUTPUT_DIR=${OUTPUT_DIR:-outputs/$(basename "${CONFIG%.*}")-$(date +%Y%m%d-%H%M)}
NUM_GPUS=${NUM_GPUS:-8}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=8
export NCCL_P2P_LEVEL=NVL
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0
export WANDB_PROJECT=${WANDB_PROJECT:-sft}
export HF_HUB_ENABLE_HF_TRANSFER=1

# Fail early when the driver is missing or GPUs are busy.
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi not found: is the NVIDIA driver installed?" >&2
    exit 1
fi
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

BUSY=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)
if [ "${BUSY}" -gt 0 ]; then
    echo "warning: ${BUSY} processes already running on the GPUs" >&2
fi

python - <<'PY'
import torch, sys
assert torch.cuda.is_available(), "CUDA not available"
print(f"torch {torch.__version__} cuda {torch.version.cuda} devices {torch.cuda.device_count()}")
try:
    import flash_attn
    print("flash_attn", flash_attn.__version__)
except ImportError:
    sys.exit("flash-attn missing: pip install flash-attn --no-build-isolation")
PY

# Resume from the latest checkpoint of a previous run, if asked to.
RESUME_ARGS=()
if [ -n "${RESUME_FROM:-}" ]; then
    LAST=$(ls -d "${RESUME_FROM}"/checkpoint-* 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "${LAST}" ]; then
        echo "resuming from ${LAST}"
        RESUME_ARGS=(--resume_from_checkpoint "${LAST}")
    fi
fi

mkdir -p "${OUTPUT_DIR}"
cp "${CONFIG}" "${OUTPUT_DIR}/"

accelerate launch \
    --config_file "${ACCEL_CONFIG}" \
    --num_processes "${NUM_GPUS}" \
    --main_process_port "${MASTER_PORT}" \
    --mixed_precision bf16 \
    --dynamo_backend no \
    -m src.train.sft \
    --config "${CONFIG}" \
    --output_dir "${OUTPUT_DIR}" \
    --attn_implementation flash_attention_2 \
    --bf16 true \
    --tf32 true \
    --gradient_checkpointing true \
    --optim adamw_torch_fused \
    --dataloader_num_workers 8 \
    --dataloader_pin_memory true \
    --ddp_timeout 7200 \
    --report_to wandb \
    "${RESUME_ARGS[@]}" \
    2>&1 | tee "${OUTPUT_DIR}/train.log"

echo "done: ${OUTPUT_DIR}"
# peak memory per GPU for the run log
nvidia-smi --query-gpu=index,memory.used --format=csv >> "${OUTPUT_DIR}/train.log"

# Tip: for 70B+ use configs/accelerate/fsdp_offload.yaml and NUM_GPUS=8 per node.
# For multi-node runs see scripts/run_multinode.sh (torchrun + NCCL over InfiniBand).
