#!/usr/bin/env bash
# Fine-tune / train rosinality StyleGAN2 on an LMDB dataset with 8 GPUs (one node).
#   bash scripts/train_stylegan2_ffhq_ddp.sh /data/ffhq_lmdb 1024
set -euo pipefail

DATA=${1:?usage: $0 LMDB_PATH [SIZE]}
SIZE=${2:-256}
NGPU=${NGPU:-8}
PORT=${PORT:-29501}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=4

# NCCL settings that worked on our DGX / IB cluster
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_ASYNC_ERROR_HANDLING=1

mkdir -p checkpoint sample

python -m torch.distributed.launch --nproc_per_node=${NGPU} --master_port=${PORT} \
    train.py \
    --batch 4 \
    --size ${SIZE} \
    --iter 800000 \
    --augment \
    --wandb \
    ${CKPT:+--ckpt ${CKPT}} \
    ${DATA}
