#!/usr/bin/env bash
# Train a ResNet-50 on ImageNet with the FFCV loaders on one 8-GPU node.
#
#   ./scripts/train_rn50_8gpu.sh 88            # epochs: 16 | 24 | 32 | 40 | 56 | 88
#   DATA_DIR=/mnt/nvme/ffcv ./scripts/train_rn50_8gpu.sh 40
#
# The .beton files are written once with write_imagenet.sh (max side 500 px, jpeg quality 90,
# compress_probability 0.50); keep them on local NVMe, the loaders memory-map them.
set -euo pipefail

EPOCHS=${1:-88}
DATA_DIR=${DATA_DIR:-/mnt/cache/imagenet_ffcv}
LOG_ROOT=${LOG_ROOT:-$HOME/ffcv-logs}
CONFIG=rn50_configs/rn50_${EPOCHS}_epochs.yaml

if [[ ! -f "${CONFIG}" ]]; then
    echo "no config for ${EPOCHS} epochs (${CONFIG})" >&2
    exit 1
fi

# ---------------------------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
if [[ "${NGPUS}" -lt 1 ]]; then
    echo "no GPU visible" >&2
    exit 1
fi
IFS=',' read -ra VISIBLE <<< "${CUDA_VISIBLE_DEVICES}"
WORLD_SIZE=${#VISIBLE[@]}
echo "training on ${WORLD_SIZE} of ${NGPUS} GPUs"

# one loader worker pool per process; FFCV's JIT'd decoders use numba threads
export OMP_NUM_THREADS=1
export NUMBA_NUM_THREADS=12
ulimit -n 65536

# ---------------------------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------------------------
RUN_ID=rn50_${EPOCHS}ep_$(date +%Y%m%d_%H%M%S)
LOG_DIR=${LOG_ROOT}/${RUN_ID}
mkdir -p "${LOG_DIR}"

# sample GPU utilisation/memory every 10 s next to the training log
nvidia-smi dmon -s um -d 10 -o T > "${LOG_DIR}/gpu_dmon.log" 2>&1 &
DMON_PID=$!
trap 'kill ${DMON_PID} 2>/dev/null || true' EXIT

python train_imagenet.py \
    --config-file "${CONFIG}" \
    --data.train_dataset="${DATA_DIR}/train_500_0.50_90.ffcv" \
    --data.val_dataset="${DATA_DIR}/val_500_0.50_90.ffcv" \
    --data.num_workers=12 \
    --data.in_memory=1 \
    --logging.folder="${LOG_DIR}" \
    --training.distributed=1 \
    --dist.world_size="${WORLD_SIZE}" \
    --dist.port="$(( 12000 + RANDOM % 1000 ))" \
    2>&1 | tee "${LOG_DIR}/train.log"

# ---------------------------------------------------------------------------------------------
# summary
# ---------------------------------------------------------------------------------------------
FINAL=$(find "${LOG_DIR}" -name log -print -quit)
if [[ -n "${FINAL}" ]]; then
    python - "${FINAL}" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
last = rows[-1]
print(f"top1={last.get('top_1', float('nan')):.4f} top5={last.get('top_5', float('nan')):.4f} "
      f"wall={last['relative_time'] / 3600:.2f}h")
PY
fi
