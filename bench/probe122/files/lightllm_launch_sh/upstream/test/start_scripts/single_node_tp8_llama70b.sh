#!/bin/bash
# Launch Llama-3-70B-Instruct with lightllm on a single 8-GPU node (H100/H800 SXM).
# usage: MODEL_DIR=/path/to/model bash single_node_tp8_llama70b.sh [port]
set -ex

PORT=${1:-8088}
MODEL_DIR=${MODEL_DIR:-/data/models/Meta-Llama-3-70B-Instruct}
LOG_DIR=${LOG_DIR:-./logs}
mkdir -p "${LOG_DIR}"

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export NCCL_P2P_LEVEL=NVL
export NCCL_DEBUG=WARN
export LIGHTLLM_LOG_LEVEL=info
export KV_TRANS_USE_P2P=1
# triton caches compiled kernels here; keep it on local disk, not NFS
export TRITON_CACHE_DIR=/tmp/triton_cache_${USER}

# print the GPU state once so the log shows what we started on
nvidia-smi

NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
echo "starting lightllm with tp=${NUM_GPUS} on port ${PORT}"

python -m lightllm.server.api_server \
    --model_dir "${MODEL_DIR}" \
    --host 0.0.0.0 \
    --port "${PORT}" \
    --tp "${NUM_GPUS}" \
    --max_total_token_num 400000 \
    --max_req_total_len 16384 \
    --graph_max_batch_size 256 \
    --graph_max_len_in_batch 8192 \
    --mode triton_flashdecoding \
    --enable_fa3 \
    --nccl_port 28765 \
    --data_type bfloat16 \
    --trust_remote_code 2>&1 | tee "${LOG_DIR}/lightllm_${PORT}.log"
