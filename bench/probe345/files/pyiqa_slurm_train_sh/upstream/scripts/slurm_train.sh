#!/usr/bin/env bash
# Usage: GPUS=16 GPUS_PER_NODE=8 ./scripts/slurm_train.sh <partition> <job_name> <option.yml> [py args]

set -x

PARTITION=$1
JOB_NAME=$2
CONFIG=$3
GPUS=${GPUS:-4}
GPUS_PER_NODE=${GPUS_PER_NODE:-4}
CPUS_PER_TASK=${CPUS_PER_TASK:-4}
SRUN_ARGS=${SRUN_ARGS:-""}
PY_ARGS=${@:4}

# InfiniBand fabric on the cluster; fall back to the ethernet NIC for bootstrap
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_DEBUG=WARN

PYTHONPATH="$(dirname $0)/..:${PYTHONPATH}" \
srun -p ${PARTITION} \
    --job-name=${JOB_NAME} \
    --gres=gpu:${GPUS_PER_NODE} \
    --ntasks=${GPUS} \
    --ntasks-per-node=${GPUS_PER_NODE} \
    --cpus-per-task=${CPUS_PER_TASK} \
    --kill-on-bad-exit=1 \
    ${SRUN_ARGS} \
    python -u pyiqa/train.py -opt $CONFIG --launcher="slurm" ${PY_ARGS}
