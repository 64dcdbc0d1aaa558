#!/bin/bash
# Launch iNat21 fine-tuning on N GPUs of this node.
#
#   ./distributed_train.sh <num_gpus> <data_dir> [train.py args...]
#   GPUS=4,5,6,7 ./distributed_train.sh 4 /data/inat21 -c configs/inat21_effnetv2_m.yaml
#
# Multi-node: set NNODES / NODE_RANK / MASTER_ADDR on every node.

NUM_PROC=$1
shift

GPUS=${GPUS:-$(seq -s, 0 $((NUM_PROC - 1)))}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=$GPUS
export OMP_NUM_THREADS=4

# Our lab nodes have two 100G NICs; keep NCCL on the data NIC and off the IB HCAs
# that the storage uses.
if [ "$NNODES" -gt 1 ]; then
    export NCCL_SOCKET_IFNAME=eth1
    export NCCL_IB_DISABLE=1
fi
export NCCL_P2P_LEVEL=NVL

echo "Running on GPUs $CUDA_VISIBLE_DEVICES (node $NODE_RANK/$NNODES, master $MASTER_ADDR:$MASTER_PORT)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader

python3 -m torch.distributed.launch \
    --nproc_per_node=$NUM_PROC \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --master_port=$MASTER_PORT \
    --use_env \
    train.py "$@"
