#!/usr/bin/env bash
# Fine-tune SeamlessM4T (speech-to-text only) on one 8xA100 node.
#
#   DATA_DIR=/data/m4t_ft OUT_DIR=/checkpoints/m4t_s2t bash scripts/finetune_m4t_s2t.sh
#
# Manifests are produced by `m4t_prepare_dataset` (see the finetune README).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(dirname "$SCRIPT_DIR")"

DATA_DIR=${DATA_DIR:-/data/m4t_ft}
OUT_DIR=${OUT_DIR:-${REPO_ROOT}/checkpoints/m4t_s2t_$(date +%Y%m%d_%H%M)}
MODEL_NAME=${MODEL_NAME:-seamlessM4T_v2_large}
TGT_LANG=${TGT_LANG:-kor}
BATCH_SIZE=${BATCH_SIZE:-4}
LR=${LR:-1e-6}
MASTER_PORT=${MASTER_PORT:-29511}

# GPUs to use; the count drives --nproc-per-node below.
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | grep -c .)

# NCCL settings that worked on our A100 cluster (no InfiniBand on this node type).
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

mkdir -p "${OUT_DIR}"
cp "$0" "${OUT_DIR}/launch.sh"

echo "== host: $(hostname)  gpus: ${NUM_GPUS}  out: ${OUT_DIR}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee "${OUT_DIR}/gpus.csv"
python -c "import torch, fairseq2; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'fairseq2', fairseq2.__version__)" \
    | tee "${OUT_DIR}/versions.txt"

for split in train validation; do
    if [[ ! -f "${DATA_DIR}/${split}_manifest.json" ]]; then
        echo "missing ${DATA_DIR}/${split}_manifest.json, run m4t_prepare_dataset first" >&2
        exit 1
    fi
done

torchrun \
    --rdzv-backend=c10d \
    --rdzv-endpoint="localhost:${MASTER_PORT}" \
    --nnodes=1 \
    --nproc-per-node="${NUM_GPUS}" \
    --no-python \
    m4t_finetune \
        --mode SPEECH_TO_TEXT \
        --train_dataset "${DATA_DIR}/train_manifest.json" \
        --eval_dataset "${DATA_DIR}/validation_manifest.json" \
        --model_name "${MODEL_NAME}" \
        --save_model_to "${OUT_DIR}/checkpoint.pt" \
        --learning_rate "${LR}" \
        --batch_size "${BATCH_SIZE}" \
        --warmup_steps 100 \
        --max_epochs 10 \
        --patience 5 \
        --eval_steps 500 \
        --log_steps 50 \
        --device cuda \
    2>&1 | tee "${OUT_DIR}/train.log"

echo "== done, best checkpoint at ${OUT_DIR}/checkpoint.pt (target ${TGT_LANG})"
