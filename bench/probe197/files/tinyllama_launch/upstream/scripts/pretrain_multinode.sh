#!/bin/bash
# Launch TinyLlama-1.1B pretraining on N nodes x 8 GPUs.
#
# Run this on every node, e.g. with pdsh or from a job scheduler:
#   NODE_RANK=0 MAIN_ADDR=172.16.101.5 NUM_NODES=2 bash scripts/pretrain_multinode.sh
#   NODE_RANK=1 MAIN_ADDR=172.16.101.5 NUM_NODES=2 bash scripts/pretrain_multinode.sh
#
# To run two jobs side by side on one 8-GPU box, set HALF_NODE=1 (job A) / HALF_NODE=2 (job B).
set -e

NODE_RANK=${NODE_RANK:-0}
MAIN_ADDR=${MAIN_ADDR:-127.0.0.1}
MAIN_PORT=${MAIN_PORT:-29500}
NUM_NODES=${NUM_NODES:-1}
DEVICES=8

if [ "${HALF_NODE:-0}" = "1" ]; then
    export CUDA_VISIBLE_DEVICES=0,1,2,3
    DEVICES=4
    MAIN_PORT=29501
elif [ "${HALF_NODE:-0}" = "2" ]; then
    export CUDA_VISIBLE_DEVICES=4,5,6,7
    DEVICES=4
    MAIN_PORT=29502
fi

export WANDB_PROJECT=${WANDB_PROJECT:-tinyllama}
export NCCL_IB_GID_INDEX=3
export OMP_NUM_THREADS=8

DATA_DIR=${DATA_DIR:-data/slim_star_combined}

lightning run model \
    --node-rank=${NODE_RANK} \
    --main-address=${MAIN_ADDR} \
    --main-port=${MAIN_PORT} \
    --accelerator=cuda \
    --devices=${DEVICES} \
    --num-nodes=${NUM_NODES} \
    pretrain/tinyllama.py --devices ${DEVICES} --train_data_dir ${DATA_DIR} --val_data_dir ${DATA_DIR}
