#!/usr/bin/env bash
# Launch InternLM-7B SFT.
#
#   slurm (default):  bash tools/run_7b_sft.sh slurm <partition> <nnodes>
#   torchrun:         bash tools/run_7b_sft.sh torch 1
#
# Each node has 8 A100/A800 80G GPUs.
set -euo pipefail

LAUNCHER=${1:-slurm}
PARTITION=${2:-llm_s}
NNODES=${3:-1}
GPUS_PER_NODE=8
CONFIG=${CONFIG:-./configs/7B_sft.py}
MASTER_PORT=${MASTER_PORT:-$((12000 + RANDOM % 20000))}

export CUDA_DEVICE_MAX_CONNECTIONS=1
export OMP_NUM_THREADS=8
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_IB_TIMEOUT=22
export NCCL_SOCKET_IFNAME=bond0
export NCCL_DEBUG=INFO
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

LOG_DIR=./logs/$(date +%Y%m%d_%H%M%S)
mkdir -p "${LOG_DIR}"

NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
echo "visible GPUs on $(hostname): ${NUM_GPUS}"

if [ "${LAUNCHER}" == "slurm" ]; then
    srun -p "${PARTITION}" \
        -N "${NNODES}" \
        -n $((NNODES * GPUS_PER_NODE)) \
        --ntasks-per-node=${GPUS_PER_NODE} \
        --gpus-per-task=1 \
        --cpus-per-task=12 \
        --kill-on-bad-exit=1 \
        python train.py --config "${CONFIG}" --launcher slurm --port "${MASTER_PORT}" \
        2>&1 | tee "${LOG_DIR}/train.log"
else
    export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
    torchrun --nnodes=1 --nproc_per_node=${GPUS_PER_NODE} \
        --master_port="${MASTER_PORT}" \
        train.py --config "${CONFIG}" --launcher torch \
        2>&1 | tee "${LOG_DIR}/train.log"
fi
