#!/usr/bin/env bash
# Train TNT-S on ImageNet-1k (300 epochs). Reference run: 1 or 2 nodes x 8 V100-32G, ~81.5 top-1.
#   single node : bash scripts/train_tnt_s.sh /data/imagenet
#   multi node  : NNODES=2 NODE_RANK=<k> MASTER_ADDR=<node0 ip> bash scripts/train_tnt_s.sh /data/imagenet
set -x

DATA_PATH=${1:-/data/imagenet}
OUTPUT=${OUTPUT:-./output/tnt_s}
NGPUS=${NGPUS:-8}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=1
# NCCL settings for our cluster (IB + eth0 for bootstrap)
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=0
export NCCL_DEBUG=INFO

mkdir -p ${OUTPUT}

python -m torch.distributed.launch \
    --nproc_per_node=${NGPUS} --nnodes=${NNODES} --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} --master_port=${MASTER_PORT} \
    train.py ${DATA_PATH} \
    --model tnt_s_patch16_224 \
    -b 128 --lr 1e-3 --weight-decay .05 --opt adamw \
    --sched cosine --epochs 300 --warmup-epochs 5 --warmup-lr 1e-6 \
    --aa rand-m9-mstd0.5-inc1 --mixup .8 --cutmix 1.0 --reprob 0.25 --remode pixel \
    --drop-path 0.1 --model-ema --model-ema-decay 0.99996 \
    --amp --pin-mem -j 8 \
    --output ${OUTPUT} 2>&1 | tee ${OUTPUT}/log_rank${NODE_RANK}.txt
