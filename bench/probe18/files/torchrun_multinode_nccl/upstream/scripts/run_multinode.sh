#!/usr/bin/env bash
# Multi-node full fine-tuning with torchrun + DeepSpeed ZeRO-3 over InfiniBand.
#
# Run the same command on every node (e.g. via pdsh or a Slurm array):
#   NNODES=4 NODE_RANK=<k> MASTER_ADDR=<node0> bash scripts/run_multinode.sh configs/qwen2_72b_full.yaml
#
# Tuned for 8x H100 SXM nodes with 8x 400Gb/s ConnectX-7 HCAs (one per GPU).
set -euo pipefail

CONFIG=${1:?usage: run_multinode.sh <config.yaml>}
NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=${GPUS_PER_NODE:-$(nvidia-smi -L | wc -l)}
DS_CONFIG=${DS_CONFIG:-configs/deepspeed/zero3_bf16.json}
RUN_NAME=${RUN_NAME:-$(basename "${CONFIG%.*}")}
OUTPUT_DIR=${OUTPUT_DIR:-/mnt/shared/outputs/${RUN_NAME}}
LOG_DIR=${OUTPUT_DIR}/logs
mkdir -p "${LOG_DIR}"

# ---------------------------------------------------------------- network
# Use the IB fabric for collectives and the management NIC for bootstrap.
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-eth0}
export NCCL_IB_HCA=${NCCL_IB_HCA:-mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7}
export NCCL_IB_GID_INDEX=3
export NCCL_IB_TIMEOUT=22
export NCCL_IB_RETRY_CNT=7
export NCCL_NET_GDR_LEVEL=PHB
export NCCL_CROSS_NIC=0
export NCCL_ALGO=Ring,Tree
export NCCL_NVLS_ENABLE=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_DEBUG_SUBSYS=INIT,NET
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_ENABLE_MONITORING=1
export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=1800

# ---------------------------------------------------------------- runtime
export CUDA_DEVICE_MAX_CONNECTIONS=1
export CUDA_LAUNCH_BLOCKING=0
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512
export OMP_NUM_THREADS=16
export TOKENIZERS_PARALLELISM=false
export HF_DATASETS_CACHE=/mnt/shared/hf_cache/datasets

echo "[node ${NODE_RANK}/${NNODES}] $(hostname) master=${MASTER_ADDR}:${MASTER_PORT} gpus=${GPUS_PER_NODE}"
if [ "${NODE_RANK}" = "0" ]; then
    nvidia-smi topo -m | tee "${LOG_DIR}/topo.txt"
    ibstat | grep -E "CA '|State|Rate" | tee "${LOG_DIR}/ibstat.txt" || true
fi

# Quick all-reduce smoke test (fails fast on a broken fabric).
if [ "${SKIP_NCCL_TEST:-0}" != "1" ]; then
    torchrun --nnodes "${NNODES}" --node_rank "${NODE_RANK}" --nproc_per_node "${GPUS_PER_NODE}" \
        --master_addr "${MASTER_ADDR}" --master_port "${MASTER_PORT}" \
        tools/nccl_smoke.py --size-mb 256 2>&1 | tee "${LOG_DIR}/nccl_smoke_${NODE_RANK}.log"
fi

torchrun \
    --nnodes "${NNODES}" \
    --node_rank "${NODE_RANK}" \
    --nproc_per_node "${GPUS_PER_NODE}" \
    --master_addr "${MASTER_ADDR}" \
    --master_port $((MASTER_PORT + 1)) \
    --rdzv_conf timeout=1800 \
    -m src.train.sft \
    --config "${CONFIG}" \
    --deepspeed "${DS_CONFIG}" \
    --output_dir "${OUTPUT_DIR}" \
    --run_name "${RUN_NAME}" \
    --bf16 true \
    --attn_implementation flash_attention_2 \
    --use_liger_kernel true \
    --gradient_checkpointing true \
    --ddp_backend nccl \
    --ddp_timeout 7200 \
    --save_on_each_node false \
    2>&1 | tee "${LOG_DIR}/train_node${NODE_RANK}.log"

# Keep a copy of the effective environment for debugging hangs.
env | grep -E "^(NCCL|TORCH|CUDA)_" | sort > "${LOG_DIR}/env_node${NODE_RANK}.txt"
