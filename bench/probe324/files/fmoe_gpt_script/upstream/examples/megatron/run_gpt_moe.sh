#!/bin/bash
# Pre-train a GPT-2 style model with FastMoE experts on Megatron-LM v2.2.
# Usage: bash run_gpt_moe.sh <NNODES> <NODE_RANK> <MASTER_ADDR>
#
# Tested on 2 x DGX-A100 (8 x A100-SXM4-80GB each), CUDA 11.8, NCCL 2.16.

set -ex

NNODES=${1:-1}
NODE_RANK=${2:-0}
MASTER_ADDR=${3:-localhost}
MASTER_PORT=6000
GPUS_PER_NODE=8
WORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=4

# FastMoE switches
export FMOE_FASTER_SCHEDULE_ENABLE=1
export FMOE_FASTER_SHADOW_ENABLE=0
export FMOE_FASTER_GROUP_SIZE=4
export FMOE_MEGATRON_VERSION=v2.2

DATA_PATH=/data/openwebtext/my-gpt2_text_document
VOCAB_FILE=/data/gpt2/gpt2-vocab.json
MERGE_FILE=/data/gpt2/gpt2-merges.txt
CHECKPOINT_PATH=checkpoints/gpt2_moe_${WORLD_SIZE}gpu

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE \
                  --nnodes $NNODES \
                  --node_rank $NODE_RANK \
                  --master_addr $MASTER_ADDR \
                  --master_port $MASTER_PORT"

python -m torch.distributed.launch $DISTRIBUTED_ARGS \
       pretrain_gpt.py \
       --tensor-model-parallel-size 1 \
       --num-layers 12 \
       --hidden-size 1024 \
       --num-attention-heads 16 \
       --micro-batch-size 8 \
       --global-batch-size 512 \
       --seq-length 1024 \
       --max-position-embeddings 1024 \
       --train-iters 500000 \
       --lr-decay-iters 320000 \
       --save $CHECKPOINT_PATH \
       --load $CHECKPOINT_PATH \
       --data-path $DATA_PATH \
       --vocab-file $VOCAB_FILE \
       --merge-file $MERGE_FILE \
       --data-impl mmap \
       --split 949,50,1 \
       --distributed-backend nccl \
       --lr 0.00015 \
       --lr-decay-style cosine \
       --min-lr 1.0e-5 \
       --weight-decay 1e-2 \
       --clip-grad 1.0 \
       --lr-warmup-fraction .01 \
       --checkpoint-activations \
       --log-interval 100 \
       --save-interval 10000 \
       --eval-interval 1000 \
       --eval-iters 10 \
       --fp16 \
       --fmoefy \
       --num-experts 4 \
       --top-k 2 \
       --balance-strategy gshard \
       --balance-loss-weight 1 2>&1 | tee logs/gpt2_moe_node${NODE_RANK}.log

nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv
