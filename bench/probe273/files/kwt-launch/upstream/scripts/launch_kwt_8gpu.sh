#!/usr/bin/env bash
# Launch KWT training on one or more 8-GPU nodes.
#
#   bash scripts/launch_kwt_8gpu.sh configs/kwt1_gsc12.yaml            # single node
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/launch_kwt_8gpu.sh configs/kwt3_gsc35.yaml
#
# Every node runs the same command with its own NODE_RANK.
set -euo pipefail

CONFIG=${1:-configs/kwt1_gsc12.yaml}
OUTPUT_DIR=${OUTPUT_DIR:-runs/$(basename "${CONFIG}" .yaml)}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NPROC_PER_NODE=$(echo "${CUDA_VISIBLE_DEVICES}" | awk -F',' '{print NF}')

# NCCL settings for our cluster: RoCE NICs on eth1, no InfiniBand
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=eth1
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL

# keep dataloader workers from oversubscribing the host
export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false

mkdir -p "${OUTPUT_DIR}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "${OUTPUT_DIR}/gpus_node${NODE_RANK}.csv"

torchrun \
  --nnodes="${NNODES}" \
  --node_rank="${NODE_RANK}" \
  --nproc_per_node="${NPROC_PER_NODE}" \
  --master_addr="${MASTER_ADDR}" \
  --master_port="${MASTER_PORT}" \
  train_ddp.py \
  --config "${CONFIG}" \
  --output_dir "${OUTPUT_DIR}" \
  2>&1 | tee "${OUTPUT_DIR}/train_node${NODE_RANK}.log"
