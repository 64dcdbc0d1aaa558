#!/usr/bin/env bash
# Launch RT-1 training on one 8-GPU node (or two, see NNODES below).
#
#   bash scripts/train_multi_gpu.sh data/fractal_npz runs/rt1_fractal
#
set -euo pipefail

DATA_DIR=${1:-data/fractal_npz}
OUT_DIR=${2:-runs/rt1_$(date +%Y%m%d_%H%M%S)}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29511}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)

# NCCL settings for our cluster (IB on eth0-named bond)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

mkdir -p "${OUT_DIR}"
echo "== RT-1 training: ${NUM_GPUS} GPUs x ${NNODES} node(s), out=${OUT_DIR}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "${OUT_DIR}/gpus.csv"

if [[ "${NNODES}" -gt 1 ]]; then
  # multi-node: torchrun drives the processes, train.py sees RANK/WORLD_SIZE
  torchrun \
    --nnodes "${NNODES}" --node_rank "${NODE_RANK}" \
    --nproc_per_node "${NUM_GPUS}" \
    --master_addr "${MASTER_ADDR}" --master_port "${MASTER_PORT}" \
    -m rt1_pytorch.train_torchrun \
    --data-dir "${DATA_DIR}" --out-dir "${OUT_DIR}" \
    --batch-size 32 --epochs 20 --fp16 2>&1 | tee "${OUT_DIR}/train_node${NODE_RANK}.log"
else
  python -m rt1_pytorch.train \
    --data-dir "${DATA_DIR}" --out-dir "${OUT_DIR}" \
    --gpus "${NUM_GPUS}" --batch-size 32 --epochs 20 --fp16 \
    --master-port "${MASTER_PORT}" 2>&1 | tee "${OUT_DIR}/train.log"
fi
