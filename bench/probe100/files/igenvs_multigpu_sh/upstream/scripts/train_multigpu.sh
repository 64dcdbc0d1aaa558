#!/usr/bin/env bash
# Multi-GPU PPO training for IsaacGymEnvs tasks (one process per GPU via torchrun).
#
#   bash scripts/train_multigpu.sh ShadowHand 4 [extra hydra overrides...]
#
set -euo pipefail

TASK=${1:-Ant}
NGPUS=${2:-2}
shift $(( $# > 2 ? 2 : $# ))

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NGPUS - 1)))}
export OMP_NUM_THREADS=4

# NCCL tuning for single-node PCIe boxes without NVLink
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}

# Vulkan device for the (optional) viewer / camera sensors
export MESA_VK_DEVICE_SELECT=10de:*

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${REPO_ROOT}/isaacgymenvs"

echo "Launching ${TASK} on GPUs ${CUDA_VISIBLE_DEVICES} (${NGPUS} processes)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

torchrun --standalone --nnodes=1 --nproc_per_node="${NGPUS}" train.py \
    multi_gpu=True \
    task="${TASK}" \
    headless=True \
    sim_device=cuda:0 \
    rl_device=cuda:0 \
    wandb_activate=False \
    "$@"
