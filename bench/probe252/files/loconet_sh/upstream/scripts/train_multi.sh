#!/bin/bash
# Train LoCoNet on AVA-ActiveSpeaker with 4 GPUs on one node.
# usage: bash scripts/train_multi.sh [config] [gpus]
#   e.g. bash scripts/train_multi.sh configs/multi.yaml 0,1,2,3

set -e

CONFIG=${1:-configs/multi.yaml}
GPUS=${2:-0,1,2,3}
NUM_GPUS=$(echo ${GPUS} | tr ',' '\n' | wc -l)
OUTPUT=${OUTPUT:-/nfs/joltik/data/ssd/AVA/output/loconet_$(date +%Y%m%d_%H%M%S)}

source ~/miniconda3/etc/profile.d/conda.sh
conda activate loconet

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=4
# the cluster nodes have no NVLink between the two PCIe switches
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=ib0

echo "[$(date)] training on GPUs ${CUDA_VISIBLE_DEVICES} (${NUM_GPUS} procs), output ${OUTPUT}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

mkdir -p ${OUTPUT}
python -u train.py --cfg ${CONFIG} \
    NUM_GPUS ${NUM_GPUS} \
    OUTPUT_DIR ${OUTPUT} \
    DIST_BACKEND nccl \
    TRAIN.AMP True \
    2>&1 | tee ${OUTPUT}/train.log

# quick evaluation of the last checkpoint on val
LAST=$(ls ${OUTPUT}/*/model/model_*.model | sort | tail -n 1)
CUDA_VISIBLE_DEVICES=0 python -u test_multicard.py --cfg ${CONFIG} \
    RESUME_PATH ${LAST} evalDataType val \
    2>&1 | tee ${OUTPUT}/eval_val.log
