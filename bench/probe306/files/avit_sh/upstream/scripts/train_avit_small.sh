#!/bin/bash
# A-ViT-S: fine-tune from DeiT-S with token-level adaptive halting.
# Single node: bash scripts/train_avit_small.sh
# Two nodes:   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_avit_small.sh   (on node 0)
#              NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/train_avit_small.sh   (on node 1)

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29510}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=8

if [ "$NNODES" -gt 1 ]; then
    # inter-node traffic over the 100G NIC, no InfiniBand on this cluster
    export NCCL_SOCKET_IFNAME=eth0
    export NCCL_IB_DISABLE=1
    export GLOO_SOCKET_IFNAME=eth0
fi

OUT=./outputs/avit_small_$(date +%Y%m%d_%H%M)
mkdir -p $OUT

python -m torch.distributed.launch \
    --nproc_per_node=$GPUS_PER_NODE \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --master_port=$MASTER_PORT \
    --use_env main_act.py \
    --config configs/avit_small_patch16_224.yaml \
    --output_dir $OUT \
    --tensorboard_dir $OUT/tb \
    --batch-size 128 \
    --lr 5e-4 \
    --ponder_token_scale 0.0005 \
    --distr_prior_alpha 0.001 \
    --dist-eval 2>&1 | tee $OUT/log.txt
