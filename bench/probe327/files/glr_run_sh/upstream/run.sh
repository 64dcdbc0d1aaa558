#!/bin/bash
# Google Landmark Recognition 2020: full training schedule on one 8-GPU node.
# step 0: 256px on GLDv2-clean, step 1: 512px fine-tuning on GLDv2 (full)
# usage: bash run.sh [b7|b6|nest101|rex20]
set -e

ARCH=${1:-b7}
DATA_DIR=${DATA_DIR:-/raid/GLDv2}
NGPU=${NGPU:-8}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
# V100 nodes without NVLink: P2P over PCIe hangs with some driver versions
export NCCL_P2P_DISABLE=1

case $ARCH in
    b7)      ENET=tf_efficientnet_b7_ns; BS=32 ;;
    b6)      ENET=tf_efficientnet_b6_ns; BS=40 ;;
    nest101) ENET=nest101;               BS=48 ;;
    rex20)   ENET=rex20;                 BS=64 ;;
    *) echo "unknown arch $ARCH"; exit 1 ;;
esac

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

# step 0
python -m torch.distributed.launch --nproc_per_node=$NGPU --master_port=$MASTER_PORT train.py \
    --kernel-type ${ARCH}ns_final_256_400k --train-step 0 --data-dir $DATA_DIR \
    --image-size 256 --batch-size $BS --enet-type $ENET --n-epochs 10 \
    --CUDA_VISIBLE_DEVICES $CUDA_VISIBLE_DEVICES

# step 1 (fine-tune at 512 from the step 0 weights)
python -m torch.distributed.launch --nproc_per_node=$NGPU --master_port=$MASTER_PORT train.py \
    --kernel-type ${ARCH}ns_final_512_400k --train-step 1 --data-dir $DATA_DIR \
    --image-size 512 --batch-size $((BS / 2)) --enet-type $ENET --n-epochs 4 --init-lr 5e-5 \
    --load-from ./weights/${ARCH}ns_final_256_400k_fold0_final.pth \
    --CUDA_VISIBLE_DEVICES $CUDA_VISIBLE_DEVICES

# single-GPU inference for the submission file
CUDA_VISIBLE_DEVICES=0 python predict.py --data-dir $DATA_DIR --model-dir ./weights --knn torch --fp16
