#!/bin/bash
# Multi-GPU training on a single node (DDP via torch.multiprocessing.spawn in src/main.py).
#
#   bash scripts/train_ddp.sh Breakout 0,1,2,3
#
# common.devices is the list of GPU ids; main.py turns it into CUDA_VISIBLE_DEVICES and spawns
# one process per visible GPU.

GAME=${1:-Breakout}
GPUS=${2:-0,1,2,3}
RUN_NAME=${3:-${GAME}_ddp_$(date +%Y%m%d_%H%M%S)}

# NCCL settings for our PCIe boxes (no NVLink between all pairs)
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export MASTER_PORT=${MASTER_PORT:-29511}

export OMP_NUM_THREADS=8
export HYDRA_FULL_ERROR=1

echo "GPUs: ${GPUS}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python src/main.py \
  env.train.id=${GAME}NoFrameskip-v4 \
  common.devices=[${GPUS}] \
  wandb.mode=online \
  wandb.name=${RUN_NAME} \
  training.num_workers_data_loaders=4
