#!/bin/bash
# Multi-GPU training of MASTER on one node.
#
# usage: bash scripts/distributed_train.sh configs/config_lmdb_dist.json [NUM_GPUS] [EXTRA ARGS]
#
# Every process drives one GPU; torch.distributed.launch passes --local_rank.

CONFIG=${1:-configs/config_lmdb_dist.json}
NGPUS=${2:-4}
shift 2 || true

GPU_IDS=$(seq -s, 0 $((NGPUS - 1)))
export CUDA_VISIBLE_DEVICES=${GPU_IDS}

# NCCL tuning for our 4x RTX 3090 boxes (no NVLink, no InfiniBand)
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=2

MASTER_PORT=${MASTER_PORT:-$((20000 + RANDOM % 10000))}

python -m torch.distributed.launch \
    --nnodes=1 --node_rank=0 \
    --nproc_per_node=${NGPUS} \
    --master_addr=127.0.0.1 --master_port=${MASTER_PORT} \
    train.py -c "${CONFIG}" -d "${GPU_IDS}" \
    --local_world_size ${NGPUS} "$@"
