#!/bin/bash
# FCOS / Faster R-CNN detector pre-training on 2 nodes x 8 V100 (32GB).
# Run once per node:
#   NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/dist_train_multinode.sh configs/fcos/fcos_imprv_R_101_FPN_2x.yaml
#   NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/dist_train_multinode.sh configs/fcos/fcos_imprv_R_101_FPN_2x.yaml
set -x

CONFIG=$1
NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
MASTER_PORT=${MASTER_PORT:-29500}
IMS_PER_GPU=${IMS_PER_GPU:-2}

# NCCL over the 100G InfiniBand fabric; eth0 is the management network
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=1

# record what we got
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv
hostname

python -m torch.distributed.launch \
    --nnodes=${NNODES} --node_rank=${NODE_RANK} \
    --nproc_per_node=${GPUS_PER_NODE} \
    --master_addr=${MASTER_ADDR} --master_port=${MASTER_PORT} \
    tools/train_net.py --config-file ${CONFIG} \
    SOLVER.IMS_PER_BATCH $((NNODES * GPUS_PER_NODE * IMS_PER_GPU)) \
    DATALOADER.NUM_WORKERS 4 \
    OUTPUT_DIR training_dir/$(basename ${CONFIG} .yaml) \
    ${@:2}
