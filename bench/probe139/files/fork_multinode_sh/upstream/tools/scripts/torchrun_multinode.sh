#!/usr/bin/env bash
# Multi-node training on the lab cluster (2 x DGX A100, 8 GPUs each).
#
# usage (on every node):
#   NODE_RANK=0 MASTER_ADDR=10.0.12.31 bash scripts/torchrun_multinode.sh \
#       cfgs/waymo_models/centerpoint_dyn_pillar_1x.yaml --batch_size 32 --use_amp
#
# Node 0 is the rendezvous host. Keep NNODES / NPROC_PER_NODE identical on all nodes.

set -euo pipefail

CFG_FILE=$1
shift
PY_ARGS=$@

NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
NPROC_PER_NODE=${NPROC_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29511}

# ---- GPU / NCCL environment -------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

# spconv picks its conv algorithm per shape; let it tune once and cache
export SPCONV_ALGO_TIME_LIMIT=100

export OMP_NUM_THREADS=4
export PYTHONPATH=$(pwd)/..:${PYTHONPATH:-}

LOG_DIR=../output/logs
mkdir -p ${LOG_DIR}
TS=$(date +%Y%m%d_%H%M%S)

echo "[node ${NODE_RANK}/${NNODES}] GPUs: ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${NPROC_PER_NODE} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    train.py --launcher pytorch --cfg_file ${CFG_FILE} ${PY_ARGS} \
    2>&1 | tee ${LOG_DIR}/train_node${NODE_RANK}_${TS}.log
