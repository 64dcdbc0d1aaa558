#!/usr/bin/env bash
# Launch an S-LoRA server for the synthetic-workload experiments.
#
#   bash benchmarks/launch_server.sh S1 a10g            # Llama-7b, 200 adapters, 1 GPU
#   TP=4 bash benchmarks/launch_server.sh S4 a100-80    # Llama-30b, tensor parallel over 4 GPUs
#
# Settings mirror benchmarks/exp_suite.py.
set -euo pipefail

SETTING=${1:-S1}
GPU_TYPE=${2:-a10g}
TP=${TP:-1}
PORT=${PORT:-8000}
NCCL_PORT=${NCCL_PORT:-28765}
NUM_ADAPTERS=${NUM_ADAPTERS:-200}
LOG_DIR=${LOG_DIR:-logs}
mkdir -p "${LOG_DIR}"

# GPUs to use: first $TP devices unless the caller pinned them already
if [[ -z "${CUDA_VISIBLE_DEVICES:-}" ]]; then
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((TP - 1)))
fi
echo "using GPUs ${CUDA_VISIBLE_DEVICES} (tp=${TP})"

NUM_VISIBLE=$(python -c "import torch; print(torch.cuda.device_count())")
if (( NUM_VISIBLE < TP )); then
    echo "need ${TP} GPUs, only ${NUM_VISIBLE} visible" >&2
    exit 1
fi

# p2p over PCIe is flaky on the a10g boxes
if [[ "${GPU_TYPE}" == "a10g" ]]; then
    export NCCL_P2P_DISABLE=1
fi
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False
export TOKENIZERS_PARALLELISM=false

case "${SETTING}" in
    S1) MODEL=huggyllama/llama-7b;  RANKS="8 16 32 64";  MAX_TOKENS=10000 ;;
    S2) MODEL=huggyllama/llama-7b;  RANKS="64 32 16 8";  MAX_TOKENS=10000 ;;
    S3) MODEL=huggyllama/llama-13b; RANKS="16 32 64";    MAX_TOKENS=8000 ;;
    S4) MODEL=huggyllama/llama-30b; RANKS="16 32 64";    MAX_TOKENS=25000 ;;
    *)  echo "unknown setting ${SETTING}" >&2; exit 1 ;;
esac

if [[ "${GPU_TYPE}" == a100-80 ]]; then
    MAX_TOKENS=$(( MAX_TOKENS * 3 ))
fi

LORA_ARGS=()
i=0
for r in ${RANKS}; do
    for ((j = 0; j < NUM_ADAPTERS / $(wc -w <<< "${RANKS}"); j++)); do
        LORA_ARGS+=(--lora-dirs "dummy-lora-7b-rank-${r}-${i}")
        i=$((i + 1))
    done
done

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "${LOG_DIR}/gpus_${SETTING}.csv"

python -m slora.server.api_server \
    --max_total_token_num "${MAX_TOKENS}" \
    --model_dir "${MODEL}" \
    --tokenizer_mode auto \
    --tp "${TP}" \
    --port "${PORT}" \
    --nccl_port "${NCCL_PORT}" \
    --pool-size-lora 0 \
    --swap \
    --prefetch \
    --scheduler slora \
    --dummy \
    "${LORA_ARGS[@]}" \
    2>&1 | tee "${LOG_DIR}/server_${SETTING}_${GPU_TYPE}_tp${TP}.log"
