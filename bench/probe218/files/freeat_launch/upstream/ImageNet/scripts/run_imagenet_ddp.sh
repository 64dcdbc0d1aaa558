#!/usr/bin/env bash
# Free / fast adversarial training on ImageNet with 8 GPUs on one node.
#
#   bash scripts/run_imagenet_ddp.sh /data/imagenet configs/free_at_eps4.yml free_eps4
#
# Multi-node: set NNODES / NODE_RANK / MASTER_ADDR on every node.
set -euo pipefail

DATA=${1:-/data/imagenet}
CONFIG=${2:-configs/free_at_eps4.yml}
PREFIX=${3:-free_adv}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPUS=$(nvidia-smi --list-gpus | wc -l)
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

# NCCL tuning for our cluster (IB between nodes, NVLink inside)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=ib0
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=4

echo "Launching on ${NGPUS} GPUs x ${NNODES} node(s), data=${DATA}, config=${CONFIG}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

mkdir -p logs
torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${NGPUS} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    main_free_ddp.py ${CONFIG} \
    --data ${DATA} \
    --output_prefix ${PREFIX} \
    2>&1 | tee logs/${PREFIX}_node${NODE_RANK}.log

# Evaluate the best checkpoint with PGD-10/50 on a single GPU
CUDA_VISIBLE_DEVICES=0 python main_free_ddp.py ${CONFIG} \
    --data ${DATA} \
    --output_prefix ${PREFIX}_eval \
    --resume trained_models/${PREFIX}_step4_eps4_repeat4/model_best.pth.tar \
    --evaluate
