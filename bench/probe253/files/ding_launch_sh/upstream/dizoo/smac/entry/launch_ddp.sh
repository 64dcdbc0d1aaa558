#!/usr/bin/env bash
# Single-node, multi-GPU data-parallel QMIX on SMAC 3s5z with DI-engine.
# The learner is replicated on every GPU and gradients are all-reduced over NCCL;
# each process runs its own collector/evaluator envs.
#
#   bash dizoo/smac/entry/launch_ddp.sh [NUM_GPUS] [SEED]

set -e

NUM_GPUS=${1:-2}
SEED=${2:-0}
MASTER_PORT=${MASTER_PORT:-29501}

export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=4

export SC2PATH=${SC2PATH:-$HOME/StarCraftII}

echo "launching ${NUM_GPUS} learner processes (seed=${SEED}, port=${MASTER_PORT})"

CUDA_VISIBLE_DEVICES=2,3 python -m torch.distributed.launch \
    --nproc_per_node=${NUM_GPUS} \
    --master_port=${MASTER_PORT} \
    --use_env \
    dizoo/smac/config/smac_3s5z_qmix_ddp_config.py --seed ${SEED}
