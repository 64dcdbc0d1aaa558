#!/bin/bash
# Multi-GPU TGL training on one machine: NGPU trainer processes + 1 host process that owns
# the C++ sampler and the shared-memory node memory (see train_dist.py).
#
#   bash scripts/run_dist.sh GDELT TGN 8
set -e

DATA=${1:-WIKI}
MODEL=${2:-TGN}
NGPU=${3:-4}
THREADS=${THREADS:-32}

cd "$(dirname "$0")/.."

# sampler_core must be built for this python
if ! python -c "import sampler_core" 2>/dev/null; then
    python setup.py build_ext --inplace
fi

# trainers talk over NCCL (gradients), everyone talks over gloo (mini-batch scatter)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo}
export OMP_NUM_THREADS=${THREADS}

echo "== GPUs =="
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader

mkdir -p logs
LOG=logs/${DATA}_${MODEL}_${NGPU}gpu_$(date +%m%d_%H%M).log

python -m torch.distributed.launch \
    --nproc_per_node=$((NGPU + 1)) \
    --master_port=${MASTER_PORT:-29501} \
    train_dist.py \
    --data ${DATA} \
    --config config/dist/${MODEL}.yml \
    --num_gpus ${NGPU} \
    --omp_num_threads ${THREADS} 2>&1 | tee ${LOG}
