#!/usr/bin/env bash
# Serve a text-to-SQL model behind vLLM's OpenAI-compatible API.
#   MODEL=seeklhy/OmniSQL-32B PORT=8000 bash scripts/serve_vllm.sh
set -euo pipefail

MODEL=${MODEL:-seeklhy/OmniSQL-7B}
PORT=${PORT:-8000}
SERVED_NAME=${SERVED_NAME:-omnisql}
MAX_LEN=${MAX_LEN:-8192}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_DEBUG=WARN
export VLLM_WORKER_MULTIPROC_METHOD=spawn

# one tensor-parallel rank per visible GPU
NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [ -n "${CUDA_VISIBLE_DEVICES}" ]; then
    NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
fi
echo "serving ${MODEL} as '${SERVED_NAME}' on ${NUM_GPUS} GPU(s), port ${PORT}"

mkdir -p logs
python -m vllm.entrypoints.openai.api_server \
    --model "${MODEL}" \
    --served-model-name "${SERVED_NAME}" \
    --tensor-parallel-size "${NUM_GPUS}" \
    --gpu-memory-utilization 0.90 \
    --dtype bfloat16 \
    --max-model-len "${MAX_LEN}" \
    --enable-prefix-caching \
    --port "${PORT}" \
    2>&1 | tee "logs/vllm_${SERVED_NAME}_${PORT}.log"
