#!/usr/bin/env bash
# Launch an SGLang OpenAI-compatible server for Llama-3.1-70B-Instruct on one 8-GPU node.
#
#   MODEL=meta-llama/Llama-3.1-70B-Instruct TP=8 bash scripts/launch_sglang.sh
#
# Logs go to ./logs/sglang-<date>.log; the server listens on $PORT (default 30000).
set -euo pipefail

MODEL=${MODEL:-meta-llama/Llama-3.1-70B-Instruct}
TP=${TP:-8}
DP=${DP:-1}
PORT=${PORT:-30000}
HOST=${HOST:-0.0.0.0}
MEM_FRACTION=${MEM_FRACTION:-0.88}
MAX_RUNNING=${MAX_RUNNING:-256}
CONTEXT_LEN=${CONTEXT_LEN:-32768}
LOG_DIR=${LOG_DIR:-./logs}

mkdir -p "${LOG_DIR}"
LOG_FILE="${LOG_DIR}/sglang-$(date +%Y%m%d-%H%M%S).log"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export CUDA_DEVICE_MAX_CONNECTIONS=1
export TORCH_CUDA_ARCH_LIST="9.0"
export HF_HUB_ENABLE_HF_TRANSFER=1
export SGLANG_ENABLE_JIT_DEEPGEMM=0

# sanity check: every GPU visible and idle
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader
n_gpus=$(nvidia-smi -L | wc -l)
if [ "${n_gpus}" -lt "${TP}" ]; then
    echo "need ${TP} GPUs, found ${n_gpus}" >&2
    exit 1
fi

python3 -c "import torch; assert torch.cuda.is_available(), 'CUDA not available'; print(torch.cuda.device_count(), 'GPUs')"

ARGS=(
    --model-path "${MODEL}"
    --host "${HOST}"
    --port "${PORT}"
    --tp-size "${TP}"
    --dp-size "${DP}"
    --mem-fraction-static "${MEM_FRACTION}"
    --max-running-requests "${MAX_RUNNING}"
    --context-length "${CONTEXT_LEN}"
    --attention-backend flashinfer
    --sampling-backend flashinfer
    --cuda-graph-max-bs 160
    --enable-torch-compile
    --torch-compile-max-bs 8
    --kv-cache-dtype fp8_e5m2
    --schedule-policy lpm
    --chunked-prefill-size 8192
    --dist-init-addr "${MASTER_ADDR:-127.0.0.1}:${DIST_PORT:-50000}"
    --trust-remote-code
    --log-level info
)

if [ -n "${QUANT:-}" ]; then
    # awq_marlin / gptq_marlin / fp8 kernels need sm_80+
    ARGS+=(--quantization "${QUANT}")
fi

if [ "${DISABLE_CUDA_GRAPH:-0}" = "1" ]; then
    ARGS+=(--disable-cuda-graph)
fi

echo "launching sglang: ${ARGS[*]}"
nohup python3 -m sglang.launch_server "${ARGS[@]}" > "${LOG_FILE}" 2>&1 &
SERVER_PID=$!
echo "${SERVER_PID}" > "${LOG_DIR}/sglang.pid"

# wait for the health endpoint
for i in $(seq 1 120); do
    if curl -sf "http://127.0.0.1:${PORT}/health" > /dev/null; then
        echo "sglang is up after ${i}0s (pid ${SERVER_PID})"
        exit 0
    fi
    sleep 10
done
echo "server did not become healthy, see ${LOG_FILE}" >&2
tail -n 50 "${LOG_FILE}" >&2
exit 1
