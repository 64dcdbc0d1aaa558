#!/usr/bin/env bash
# Multi-node launcher for the hockey re-ID training (SLURM or plain ssh).
#
#   single node : bash scripts/launch_ddp.sh
#   two nodes   : NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.11 bash scripts/launch_ddp.sh   (on node 0)
#                 NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.11 bash scripts/launch_ddp.sh   (on node 1)
set -e

source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate hockey-reid

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-${SLURM_NODEID:-0}}
GPUS_PER_NODE=${GPUS_PER_NODE:-4}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
DATA_ROOT=${DATA_ROOT:-/data/hockey_reid}
OUT=${OUT:-runs/hockey_vits16_$(date +%Y%m%d_%H%M)}

# restrict to the GPUs we were given (4 per node on the A100 partition)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}

# NCCL over the 100G InfiniBand fabric; fall back to TCP on eth0 for the workstation
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-ib0}
export NCCL_IB_HCA=mlx5
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0

# allocator: avoid fragmentation with the variable-size eval batches
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=8

mkdir -p "${OUT}"
echo "node ${NODE_RANK}/${NNODES}  master ${MASTER_ADDR}:${MASTER_PORT}  gpus ${CUDA_VISIBLE_DEVICES}"

torchrun \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --nproc_per_node="${GPUS_PER_NODE}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    train_ddp.py \
        --data_root "${DATA_ROOT}" \
        --out "${OUT}" \
        --epochs 60 \
        --batch_size 64 \
        --lr 3.5e-4 \
        --amp \
        --sync_bn \
        --workers 8 \
    2>&1 | tee "${OUT}/train_node${NODE_RANK}.log"
