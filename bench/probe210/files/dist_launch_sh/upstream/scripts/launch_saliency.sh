#!/bin/bash
# Multi-GPU attribution dump over ImageNet-val (one node).
#
#   bash scripts/launch_saliency.sh ig resnet50
#   NGPUS=4 DATA=/mnt/imagenet/val bash scripts/launch_saliency.sh gradcam vgg16
set -e

METHOD=${1:-ig}
ARCH=${2:-resnet50}
NGPUS=${NGPUS:-8}
DATA=${DATA:-/datasets/imagenet/val}
OUT=${OUT:-/scratch/${USER}/attr/${ARCH}_${METHOD}}
BATCH=${BATCH:-32}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8

mkdir -p "${OUT}"
echo "method=${METHOD} arch=${ARCH} gpus=${NGPUS} -> ${OUT}"

torchrun --standalone --nproc_per_node="${NGPUS}" \
    scripts/distributed_saliency.py \
    --method "${METHOD}" \
    --arch "${ARCH}" \
    --data "${DATA}" \
    --out "${OUT}" \
    --batch-size "${BATCH}" \
    --amp 2>&1 | tee "${OUT}/run.log"

python - "${OUT}" <<'PY'
import json, sys, os
with open(os.path.join(sys.argv[1], "summary.json")) as f:
    s = json.load(f)
print(f"{s['images']} maps, top1={s['top1']:.4f}, {s['seconds'] / 60:.1f} min")
PY
