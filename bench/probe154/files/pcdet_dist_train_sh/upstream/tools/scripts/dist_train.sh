#!/usr/bin/env bash
# Usage: bash scripts/dist_train.sh NGPUS --cfg_file cfgs/waymo_models/centerpoint.yaml [--batch_size 16 ...]
#
# Picks a free rendezvous port and launches one process per GPU on this node.
# Set GPUS=2,3 to restrict which cards are used.

set -x
NGPUS=$1
PY_ARGS=${@:2}

export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=4
# RTX 40xx boxes hang in the first all-reduce without these
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

while true
do
    PORT=$(( ((RANDOM<<15)|RANDOM) % 49152 + 10000 ))
    status="$(nc -z 127.0.0.1 $PORT < /dev/null &>/dev/null; echo $?)"
    if [ "${status}" != "0" ]; then
        break;
    fi
done
echo $PORT

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

torchrun --nproc_per_node=${NGPUS} --rdzv_endpoint=localhost:${PORT} train.py --launcher pytorch ${PY_ARGS}
