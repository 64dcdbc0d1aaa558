#!/bin/bash
# Multi-GPU training of Gaze-LLE with torchrun.
#
#   GPUS=0,1,2,3 bash scripts/train_dist.sh configs/gazefollow_vitb.yaml [extra args]
#
# Multi-node: set NNODES / NODE_RANK / MASTER_ADDR on every node.

CONFIG=${1:-configs/gazefollow_vitb.yaml}
shift || true

GPUS=${GPUS:-0,1,2,3}
NGPUS=$(echo "${GPUS}" | tr ',' '\n' | wc -l)
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29513}

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
# our A6000 boxes have no NVLink and P2P over the PCIe switch hangs
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eno1}
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export PYTHONPATH=$(dirname "$0")/..:${PYTHONPATH}

echo "[train_dist] nodes=${NNODES} node_rank=${NODE_RANK} gpus/node=${NGPUS} (${GPUS}) master=${MASTER_ADDR}:${MASTER_PORT}"

torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${NGPUS} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    scripts/train_gazefollow.py --config "${CONFIG}" "$@"
