#!/bin/bash
# Launch train_ddp.py with torchrun, one process per GPU.
#
#   single node : bash scripts/dist_train.sh
#   two nodes   : NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/dist_train.sh   # on node 0
#                 NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/dist_train.sh   # on node 1
#
# Extra arguments are forwarded to train_ddp.py.
set -euo pipefail

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=${GPUS_PER_NODE:-$(nvidia-smi -L | wc -l)}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}

# NCCL: pick the right NIC on multi-node runs, keep InfiniBand on if present
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_P2P_LEVEL=NVL

LOG_DIR=${LOG_DIR:-./logs/ddp_$(date +%Y%m%d_%H%M%S)}
mkdir -p "$LOG_DIR"

echo "nodes=$NNODES rank=$NODE_RANK gpus/node=$GPUS_PER_NODE master=$MASTER_ADDR:$MASTER_PORT"

torchrun \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --nproc_per_node="$GPUS_PER_NODE" \
    --master_addr="$MASTER_ADDR" \
    --master_port="$MASTER_PORT" \
    train_ddp.py \
    --batch_size 60 \
    --epochs 4 \
    --amp \
    --out_dir "$LOG_DIR" "$@" 2>&1 | tee "$LOG_DIR/train_node${NODE_RANK}.log"
