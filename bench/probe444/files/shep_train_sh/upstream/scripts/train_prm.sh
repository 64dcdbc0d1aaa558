#!/usr/bin/env bash
# PRM training on the automatically annotated data (8x A100-80G, bf16, ~6h for 1 epoch on 445K samples)
set -x

MODEL=${MODEL:-"mistralai/Mistral-7B-v0.1"}
TRAIN=${TRAIN:-"outputs/annotation/math_shepherd_hard.jsonl"}
OUT=${OUT:-"checkpoints/math-shepherd-mistral-7b-prm"}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}

export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

torchrun --nnodes ${NNODES} --node_rank ${NODE_RANK} --nproc_per_node 8 \
    --master_addr ${MASTER_ADDR} --master_port 29511 \
    prm/train_prm.py \
    --model_name_or_path ${MODEL} \
    --train_file ${TRAIN} \
    --eval_file outputs/annotation/prm_eval_2k.jsonl \
    --output_dir ${OUT} \
    --max_length 1024 \
    --per_device_batch_size 4 \
    --grad_accum 4 \
    --lr 2e-6 \
    --epochs 1 \
    --gradient_checkpointing \
    --save_every 2000 2>&1 | tee ${OUT}.log
