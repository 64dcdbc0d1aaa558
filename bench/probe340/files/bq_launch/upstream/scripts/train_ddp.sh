#!/bin/bash
# BQ-NCO on CVRP100: imitation learning from HGS solutions, single node, all visible GPUs (bf16).
# Usage: bash scripts/train_ddp.sh [extra args for train_ddp.py]

DATA=${DATA:-data/cvrp}
OUT=${OUT:-output/cvrp100_bq}

export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_DISTRIBUTED_DEBUG=${TORCH_DISTRIBUTED_DEBUG:-OFF}
export OMP_NUM_THREADS=4
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}

NGPUS=$(nvidia-smi -L | wc -l)
echo "Launching on ${NGPUS} GPUs (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES})"

mkdir -p "${OUT}"

torchrun --standalone --nproc_per_node=${NGPUS} train_ddp.py \
    --problem cvrp \
    --train_dataset "${DATA}/cvrp100_train_hgs.npz" \
    --val_dataset "${DATA}/cvrp100_val_hgs.npz" \
    --output_dir "${OUT}" \
    --train_batch_size 256 \
    --val_batch_size 1024 \
    --nb_epochs 1000 \
    --lr 7.5e-4 \
    --decay_rate 0.98 --decay_every 50 \
    --num_workers 8 \
    --amp \
    "$@" 2>&1 | tee "${OUT}/train.log"
