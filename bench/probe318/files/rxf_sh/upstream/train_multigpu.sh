#!/usr/bin/env bash
# Multi-GPU training for Retinexformer (BasicSR launcher).
#
# Usage:
#   bash train_multigpu.sh <option yml> <gpu ids> [master port]
# Example:
#   bash train_multigpu.sh Options/RetinexFormer_FiveK.yml 0,1,2,3,4,5,6,7 4321
#   bash train_multigpu.sh Options/RetinexFormer_NTIRE.yml 0,1,2,3 4329

set -e

CONFIG=$1
GPUS=$2
PORT=${3:-4321}

if [ $# -lt 2 ]; then
    echo "usage: bash train_multigpu.sh [option yml] [gpu ids, e.g. 0,1,2,3] [port]"
    exit 1
fi

if [ ! -f "${CONFIG}" ]; then
    echo "option file ${CONFIG} not found"
    exit 1
fi

# number of processes = number of comma separated gpu ids
NUM_GPUS=$(echo "${GPUS}" | awk -F',' '{print NF}')

echo "Training ${CONFIG} on GPUs ${GPUS} (${NUM_GPUS} processes, master port ${PORT})"

export OMP_NUM_THREADS=4
# the lab boxes have no InfiniBand; keep NCCL on the sockets of the first NIC
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}

LOG_DIR=experiments/launch_logs
mkdir -p ${LOG_DIR}
STAMP=$(date +%Y%m%d_%H%M%S)

CUDA_VISIBLE_DEVICES=${GPUS} \
PYTHONPATH="$(dirname $0):${PYTHONPATH}" \
python -m torch.distributed.launch \
    --nproc_per_node=${NUM_GPUS} \
    --master_port=${PORT} \
    basicsr/train.py -opt ${CONFIG} --launcher pytorch 2>&1 | tee ${LOG_DIR}/train_${STAMP}.log
