#!/usr/bin/env bash
# Multi-GPU training of MatteFormer on Composition-1k.
#
#   bash scripts/train.sh                 # 4 GPUs, default config
#   bash scripts/train.sh 8 config/MatteFormer_Composition1k.toml
#
# Multi-node: set NNODES / NODE_RANK / MASTER_ADDR on every node.
set -e

NUM_GPUS=${1:-4}
CONFIG=${2:-config/MatteFormer_Composition1k.toml}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
PORT=${PORT:-29501}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=4
# PCIe-only boxes hang in NCCL P2P; disable it there.
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN
# Inter-node traffic goes over the first ethernet interface.
export NCCL_SOCKET_IFNAME=eth0

LOG_DIR=logs/launcher
mkdir -p ${LOG_DIR}
STAMP=$(date +%Y%m%d-%H%M%S)

if [ ! -f "${CONFIG}" ]; then
    echo "config ${CONFIG} not found" >&2
    exit 1
fi

echo "Training ${CONFIG} on ${NUM_GPUS} GPU(s) x ${NNODES} node(s)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python -m torch.distributed.launch \
    --nproc_per_node=${NUM_GPUS} \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${PORT} \
    main.py \
    --config=${CONFIG} 2>&1 | tee ${LOG_DIR}/train_${NODE_RANK}_${STAMP}.log
