#!/usr/bin/env bash

set -x
NGPUS=$1
PY_ARGS=${@:2}

# pick a free port for the rendezvous so several jobs can share one 8-GPU box
while true
do
    PORT=$(( ((RANDOM<<15)|RANDOM) % 49152 + 10000 ))
    status="$(nc -z 127.0.0.1 $PORT < /dev/null &>/dev/null; echo $?)"
    if [ "${status}" != "0" ]; then
        break;
    fi
done
echo $PORT

# uncomment when the cluster has no InfiniBand
# export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

python -m torch.distributed.launch --nproc_per_node=${NGPUS} --rdzv_endpoint=localhost:${PORT} train.py --launcher pytorch ${PY_ARGS}
