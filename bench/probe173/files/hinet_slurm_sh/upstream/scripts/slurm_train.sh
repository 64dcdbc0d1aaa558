#!/usr/bin/env bash
# Multi-node training on a Slurm cluster.
#   GPUS=16 ./scripts/slurm_train.sh <partition> HINet-GoPro options/train/GoPro/HINet.yml
# BasicSR's _init_dist_slurm reads SLURM_PROCID / SLURM_NTASKS / SLURM_NODELIST.

set -x

PARTITION=$1
JOB_NAME=$2
CONFIG=$3
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
CPUS_PER_TASK=${CPUS_PER_TASK:-5}
SRUN_ARGS=${SRUN_ARGS:-""}
PY_ARGS=${@:4}

# NCCL settings for our IB cluster
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=1

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
srun -p ${PARTITION} \
    --job-name=${JOB_NAME} \
    --gres=gpu:${GPUS_PER_NODE} \
    --ntasks=${GPUS} \
    --ntasks-per-node=${GPUS_PER_NODE} \
    --cpus-per-task=${CPUS_PER_TASK} \
    --kill-on-bad-exit=1 \
    ${SRUN_ARGS} \
    python -u basicsr/train.py -opt ${CONFIG} --launcher="slurm" ${PY_ARGS}
