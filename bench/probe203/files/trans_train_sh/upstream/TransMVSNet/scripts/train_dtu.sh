#!/usr/bin/env bash
# Train TransMVSNet on DTU. Single node: bash scripts/train_dtu.sh
# Multi node: NNODES=2 NODE_RANK=<k> MASTER_ADDR=<node0 ip> bash scripts/train_dtu.sh
source scripts/data_path.sh

THISNAME="TransMVSNet_dtu"
LOG_DIR="./checkpoints/"$THISNAME
if [ ! -d $LOG_DIR ]; then
    mkdir -p $LOG_DIR
fi

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-23456}
NGPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)

# interface used for the rendezvous / collectives between nodes
export NCCL_SOCKET_IFNAME=${IFNAME:-eth0}
export GLOO_SOCKET_IFNAME=${IFNAME:-eth0}
export NCCL_ASYNC_ERROR_HANDLING=1

echo "nodes=${NNODES} rank=${NODE_RANK} gpus/node=${NGPUS_PER_NODE} master=${MASTER_ADDR}:${MASTER_PORT}"

python -m torch.distributed.launch --nnodes=$NNODES --node_rank=$NODE_RANK \
	--nproc_per_node=$NGPUS_PER_NODE --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT train.py \
	--logdir $LOG_DIR \
	--dataset=dtu_yao \
	--batch_size=1 \
	--trainpath=$MVS_TRAINING \
	--summary_freq 100 \
	--ndepths 48,32,8 \
	--depth_inter_r 4.0,1.0,0.5 \
	--group_cor \
	--inverse_depth \
	--rt \
	--mono \
	--attn_temp 2 \
	--use_raw_train \
	--trainlist lists/dtu/train.txt \
	--testlist lists/dtu/val.txt \
	--numdepth=192 ${@:1} | tee -a $LOG_DIR/log.txt
