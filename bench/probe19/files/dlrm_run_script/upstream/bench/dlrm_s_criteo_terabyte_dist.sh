#!/bin/bash
# Train DLRM on Criteo Terabyte with 8 GPUs on one node (MLPerf config).
# Usage: ./bench/dlrm_s_criteo_terabyte_dist.sh [extra args for dlrm_s_pytorch.py]
set -euo pipefail

NGPUS=${NGPUS:-8}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=8
export NCCL_DEBUG=INFO
export NCCL_P2P_LEVEL=NVL
export NCCL_ASYNC_ERROR_HANDLING=1
export DLRM_ALLTOALL_IMPL=alltoall
export CUBLAS_WORKSPACE_CONFIG=:4096:8

DATA=${DATA:-/data/criteo_terabyte}
OUT=${OUT:-./runs/terabyte_$(date +%Y%m%d_%H%M%S)}
mkdir -p "${OUT}"

echo "=== environment ===" | tee "${OUT}/env.txt"
nvidia-smi topo -m | tee -a "${OUT}/env.txt"
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.device_count())" | tee -a "${OUT}/env.txt"

dlrm_extra_option=""
if [[ "${MLPERF:-1}" == "1" ]]; then
    dlrm_extra_option="--mlperf-logging --mlperf-auc-threshold=0.8025 --mlperf-bin-loader --mlperf-bin-shuffle"
fi

torchrun --standalone --nnodes=1 --nproc_per_node="${NGPUS}" \
    dlrm_s_pytorch.py \
    --arch-sparse-feature-size=128 \
    --arch-mlp-bot="13-512-256-128" \
    --arch-mlp-top="1024-1024-512-256-1" \
    --max-ind-range=40000000 \
    --data-generation=dataset \
    --data-set=terabyte \
    --raw-data-file="${DATA}/day" \
    --processed-data-file="${DATA}/terabyte_processed.npz" \
    --loss-function=bce \
    --round-targets=True \
    --learning-rate=1.0 \
    --mini-batch-size=32768 \
    --print-freq=1024 \
    --print-time \
    --test-freq=102400 \
    --test-mini-batch-size=65536 \
    --test-num-workers=16 \
    --memory-map \
    --use-gpu \
    --dist-backend=nccl \
    ${dlrm_extra_option} "$@" 2>&1 | tee "${OUT}/train.log"

echo "done: ${OUT}"
