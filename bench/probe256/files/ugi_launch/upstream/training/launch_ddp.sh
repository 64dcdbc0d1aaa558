#!/bin/bash
# Multi-GPU / multi-node launcher for uniGradICON training (DDP).
#
# single node, 4 GPUs:   bash training/launch_ddp.sh
# two nodes:             NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash training/launch_ddp.sh   (on node 0)
#                        NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash training/launch_ddp.sh   (on node 1)

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-4}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29511}
BATCH_PER_GPU=${BATCH_PER_GPU:-1}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}

# NCCL settings for our cluster (InfiniBand on ib0, no NVLink between the A6000 pairs)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_P2P_DISABLE=1
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8

LOG_DIR=${LOG_DIR:-results/logs}
mkdir -p "${LOG_DIR}"

echo "node ${NODE_RANK}/${NNODES}: ${GPUS_PER_NODE} GPUs (${CUDA_VISIBLE_DEVICES}), master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi -L

torchrun \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --nproc_per_node="${GPUS_PER_NODE}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    training/train.py \
        --ddp \
        --batch_size "${BATCH_PER_GPU}" \
        --workers 6 \
        "$@" 2>&1 | tee "${LOG_DIR}/train_node${NODE_RANK}.log"
