#!/bin/bash
# Multi-GPU training of ViTCA on one node.
#   bash scripts/train_ddp.sh landscapes
EXPERIMENT=${1:-landscapes}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

NGPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
echo "training ${EXPERIMENT} on ${NGPUS} GPUs (${CUDA_VISIBLE_DEVICES})"

torchrun --standalone --nnodes=1 --nproc_per_node="${NGPUS}" \
    train.py experiment="${EXPERIMENT}" \
    data.batch_size=$((128 / NGPUS)) \
    hydra.run.dir="outputs/${EXPERIMENT}_ddp${NGPUS}"
