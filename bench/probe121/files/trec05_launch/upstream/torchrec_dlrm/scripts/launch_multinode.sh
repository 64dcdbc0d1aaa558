#!/bin/bash
# Multi-node DLRM-DCNv2 training on Criteo 1TB (multi-hot), 8 GPUs per node.
#
# Run once per node (e.g. from a Slurm array or pdsh):
#   NODE_RANK=<k> NNODES=<n> MASTER_ADDR=<host0> bash scripts/launch_multinode.sh
#
set -ex

NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
DATA=${DATA:-/data/criteo_1tb/multi_hot_sparse}

# ---- NCCL / network -------------------------------------------------------
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_IB_GID_INDEX=3
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT,NET
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_TIMEOUT=1800
export GLOO_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME}

# ---- CUDA -------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export CUDA_DEVICE_MAX_CONNECTIONS=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=8

cd "$(dirname "$0")/.."

LOG_DIR=${LOG_DIR:-logs/$(date +%Y%m%d_%H%M%S)}
mkdir -p "${LOG_DIR}"

torchrun \
    --nnodes "${NNODES}" \
    --node_rank "${NODE_RANK}" \
    --nproc_per_node "${GPUS_PER_NODE}" \
    --rdzv_backend c10d \
    --rdzv_endpoint "${MASTER_ADDR}:${MASTER_PORT}" \
    dlrm_main.py \
    --embedding_dim 128 \
    --dense_arch_layer_sizes 512,256,128 \
    --over_arch_layer_sizes 1024,1024,512,256,1 \
    --synthetic_multi_hot_criteo_path "${DATA}" \
    --num_embeddings_per_feature 40000000,39060,17295,7424,20265,3,7122,1543,63,40000000,3067956,405282,10,2209,11938,155,4,976,14,40000000,40000000,40000000,590152,12973,108,36 \
    --validation_freq_within_epoch $((51200 * 8 / (NNODES * GPUS_PER_NODE))) \
    --epochs 1 \
    --pin_memory \
    --mmap_mode \
    --batch_size $((65536 / (NNODES * GPUS_PER_NODE))) \
    --interaction_type=dcn \
    --dcn_num_layers=3 \
    --dcn_low_rank_dim=512 \
    --adagrad \
    --learning_rate 0.005 \
    --multi_hot_distribution_type uniform \
    --multi_hot_sizes=3,2,1,2,6,1,1,1,1,7,3,8,1,6,9,5,1,1,1,12,100,27,10,3,1,1 \
    --allow_tf32 \
    2>&1 | tee "${LOG_DIR}/node${NODE_RANK}.log"
