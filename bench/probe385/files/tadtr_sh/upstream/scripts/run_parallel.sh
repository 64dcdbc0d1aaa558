#!/usr/bin/env bash
# Multi-GPU training of TadTR with torch.distributed.launch.
#   bash scripts/run_parallel.sh <num_gpus> <cfg> [extra args]
# e.g. bash scripts/run_parallel.sh 2 configs/thumos14_i3d2s_tadtr.yml
set -x

NGPU=${1:-2}
CFG=${2:-configs/thumos14_i3d2s_tadtr.yml}
PY_ARGS=${@:3}

# select the first NGPU cards unless the caller already restricted them
if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU-1)))
fi
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

MASTER_PORT=${MASTER_PORT:-29510}

python -m torch.distributed.launch --nproc_per_node=${NGPU} --master_port=${MASTER_PORT} --use_env \
    main.py --cfg ${CFG} --multi_gpu ${PY_ARGS}
