#!/bin/bash
# ISNet on IRSTD-1k.
#   single GPU :  bash scripts/train_irstd1k.sh 1
#   4 GPUs     :  bash scripts/train_irstd1k.sh 4
NGPUS=${1:-1}
PORT=${PORT:-29501}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=4

if [ "$NGPUS" -gt 1 ]; then
    python -m torch.distributed.launch --nproc_per_node=$NGPUS --master_port=$PORT \
        train.py --dataset-dir ./datasets/IRSTD-1k --batch-size 4 --epochs 400 --lr 0.05 "${@:2}"
else
    python train.py --dataset-dir ./datasets/IRSTD-1k --batch-size 8 --epochs 400 --lr 0.05 "${@:2}"
fi

# monitor GPU usage:  watch -n 1 nvidia-smi
