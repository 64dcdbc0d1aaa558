#!/bin/bash
# Mixed-precision ImageNet training with apex.amp on one DGX-1 (8x V100).
#
#   bash scripts/train_imagenet_amp.sh /data/imagenet [O1|O2] [arch]
#
# Environment overrides: NGPUS, BATCH, WORKERS, MASTER_PORT.
set -e

DATA=${1:-/data/imagenet}
OPT_LEVEL=${2:-O2}
ARCH=${3:-resnet50}
NGPUS=${NGPUS:-8}
BATCH=${BATCH:-224}
WORKERS=${WORKERS:-8}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

# ---------------------------------------------------------------------------
# sanity checks: driver, toolkit, apex extensions
# ---------------------------------------------------------------------------
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())"
python -c "import apex, amp_C" || { echo "apex was built without --cuda_ext"; exit 1; }

if [ "$NGPUS" -gt "$(nvidia-smi -L | wc -l)" ]; then
    echo "asked for $NGPUS GPUs but only $(nvidia-smi -L | wc -l) are visible" >&2
    exit 1
fi

RESUME_ARGS=""
if [ -n "" ]; then
    if [ ! -f "" ]; then
        echo "checkpoint  not found" >&2
        exit 1
    fi
    RESUME_ARGS="--resume "
fi

LOG_DIR=logs/${ARCH}_${OPT_LEVEL}_$(date +%Y%m%d_%H%M%S)
mkdir -p "${LOG_DIR}"
echo "logging to ${LOG_DIR}"

# ---------------------------------------------------------------------------
# one process per GPU; main_amp.py reads LOCAL_RANK / --local_rank
# ---------------------------------------------------------------------------
python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=${MASTER_PORT} \
    examples/imagenet/main_amp.py \
    -a ${ARCH} \
    --b ${BATCH} \
    --workers ${WORKERS} \
    --opt-level ${OPT_LEVEL} \
    --loss-scale 128.0 \
    --sync_bn      \
    "${DATA}" 2>&1 | tee "${LOG_DIR}/train.log"

# keep a snapshot of the GPU clocks / utilisation next to the log
nvidia-smi dmon -c 1 > "${LOG_DIR}/gpu_state.txt"
echo "done: $(tail -n 1 "${LOG_DIR}/train.log")"
