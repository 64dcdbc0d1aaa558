#!/usr/bin/env bash
# Multi-node DLRM-DCNv2 training on Criteo 1TB (MLPerf-style settings).
#
# Run the same script on every node, e.g. with 2 nodes:
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/run_dlrm_multinode.sh
#   NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/run_dlrm_multinode.sh
#
# Under SLURM the rank variables are derived from SLURM_* automatically.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "${SCRIPT_DIR}")"

# ---------------------------------------------------------------------------
# cluster layout
# ---------------------------------------------------------------------------
NNODES=${NNODES:-${SLURM_NNODES:-1}}
NODE_RANK=${NODE_RANK:-${SLURM_NODEID:-0}}
MASTER_ADDR=${MASTER_ADDR:-$(scontrol show hostnames "${SLURM_JOB_NODELIST:-localhost}" 2>/dev/null | head -n 1 || echo localhost)}
MASTER_PORT=${MASTER_PORT:-29500}

# sanity check: driver up and all GPUs visible before we burn a queue slot
if ! nvidia-smi > /dev/null 2>&1; then
    echo "nvidia-smi failed on $(hostname): no usable GPU driver" >&2
    exit 1
fi
NPROC_PER_NODE=${NPROC_PER_NODE:-$(nvidia-smi --list-gpus | wc -l)}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NPROC_PER_NODE - 1)))}

# ---------------------------------------------------------------------------
# communication
# ---------------------------------------------------------------------------
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_ASYNC_ERROR_HANDLING=1
export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-eth0}

# ---------------------------------------------------------------------------
# runtime / allocator
# ---------------------------------------------------------------------------
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export CUDA_DEVICE_MAX_CONNECTIONS=1
export OMP_NUM_THREADS=8
export TORCH_NCCL_AVOID_RECORD_STREAMS=1

# ---------------------------------------------------------------------------
# data + hyper-parameters
# ---------------------------------------------------------------------------
DATA_DIR=${DATA_DIR:-/data/criteo_1tb/multihot}
BATCH_SIZE=${BATCH_SIZE:-65536}
LR=${LR:-0.005}
EPOCHS=${EPOCHS:-1}
LOG_DIR=${LOG_DIR:-${REPO_DIR}/logs/$(date +%Y%m%d_%H%M%S)}
mkdir -p "${LOG_DIR}"

echo "node ${NODE_RANK}/${NNODES}: ${NPROC_PER_NODE} GPUs, master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee "${LOG_DIR}/gpus_node${NODE_RANK}.csv"

torchrun \
    --nnodes "${NNODES}" \
    --node_rank "${NODE_RANK}" \
    --nproc_per_node "${NPROC_PER_NODE}" \
    --rdzv_backend c10d \
    --rdzv_endpoint "${MASTER_ADDR}:${MASTER_PORT}" \
    --rdzv_id "dlrm_${SLURM_JOB_ID:-local}" \
    "${REPO_DIR}/dlrm_main.py" \
    --embedding_dim 128 \
    --dense_arch_layer_sizes 512,256,128 \
    --over_arch_layer_sizes 1024,1024,512,256,1 \
    --synthetic_multi_hot_criteo_path "${DATA_DIR}" \
    --num_embeddings_per_feature 40000000,39060,17295,7424,20265,3,7122,1543,63,40000000,3067956,405282,10,2209,11938,155,4,976,14,40000000,40000000,40000000,590152,12973,108,36 \
    --validation_freq_within_epoch $((2048 * 1024 / BATCH_SIZE)) \
    --epochs "${EPOCHS}" \
    --pin_memory \
    --mmap_mode \
    --batch_size "${BATCH_SIZE}" \
    --interaction_type=dcn \
    --dcn_num_layers=3 \
    --dcn_low_rank_dim=512 \
    --adagrad \
    --learning_rate "${LR}" \
    --allow_tf32 \
    --print_sharding_plan \
    2>&1 | tee "${LOG_DIR}/train_node${NODE_RANK}.log"

echo "done; logs in ${LOG_DIR}"
