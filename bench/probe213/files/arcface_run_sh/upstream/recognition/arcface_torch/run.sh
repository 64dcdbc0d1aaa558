#!/usr/bin/env bash
# Launch arcface_torch training on one or more 8-GPU nodes.
#
#   single node : bash run.sh configs/ms1mv3_r50
#   two nodes   : bash run.sh configs/wf42m_pfc02_r100 2 0 10.0.0.1   (on node 0)
#                 bash run.sh configs/wf42m_pfc02_r100 2 1 10.0.0.1   (on node 1)
#
# Every process drives exactly one GPU (torch.cuda.set_device(local_rank) in train_v2.py),
# so --nproc_per_node must match the number of visible GPUs.
set -e

CONFIG=${1:-configs/ms1mv3_r50}
NNODES=${2:-1}
NODE_RANK=${3:-0}
MASTER_ADDR=${4:-"127.0.0.1"}
MASTER_PORT=${MASTER_PORT:-12581}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}

export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}

if [ "$NNODES" -gt 1 ]; then
  echo "multi-node run: $NNODES nodes x $GPUS_PER_NODE gpus, this is node $NODE_RANK (master $MASTER_ADDR:$MASTER_PORT)"
fi

# record the GPU state next to the logs, handy when a run dies with OOM
WORK_DIR=work_dirs/$(basename "$CONFIG")
mkdir -p "$WORK_DIR"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv > "$WORK_DIR/gpus_node${NODE_RANK}.csv"

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun \
  --nproc_per_node=$GPUS_PER_NODE \
  --nnodes=$NNODES \
  --node_rank=$NODE_RANK \
  --master_addr=$MASTER_ADDR \
  --master_port=$MASTER_PORT \
  train_v2.py "$CONFIG" 2>&1 | tee "$WORK_DIR/train_node${NODE_RANK}.log"

ps -ef | grep "train_v2" | grep -v grep | awk '{print "kill -9 "$2}' | sh
