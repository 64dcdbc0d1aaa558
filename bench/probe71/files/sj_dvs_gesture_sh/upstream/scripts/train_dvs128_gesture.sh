#!/usr/bin/env bash
# Reproduces the DVS128 Gesture results of the "Parametric LIF" / SEW-ResNet papers with SpikingJelly.
#
# Usage:
#   bash scripts/train_dvs128_gesture.sh [single|ddp|sweep] [data_dir]
#
# The frames are integrated once by spikingjelly.datasets.dvs128_gesture (split_by='number', T frames)
# and cached under ${DATA_DIR}/frames_number_${T}_split_by_number, so the first run takes a while.
set -euo pipefail

MODE=${1:-single}
DATA_DIR=${2:-/datasets/DVS128Gesture}
OUT_DIR=${OUT_DIR:-./logs/dvs128_gesture}
T=${T:-16}
BATCH=${BATCH:-16}
EPOCHS=${EPOCHS:-200}
WORKERS=${WORKERS:-8}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
export OMP_NUM_THREADS=4
export CUPY_CACHE_DIR=${HOME}/.cupy/kernel_cache

mkdir -p "${OUT_DIR}"

echo "== environment =="
python -c "import torch, spikingjelly; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
python -c "import cupy; print('cupy', cupy.__version__, 'devices', cupy.cuda.runtime.getDeviceCount())"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader

# Integrate the events into frames before training so that every worker reads the cache
# instead of racing to create it.
python -m spikingjelly.datasets.dvs128_gesture \
    --root "${DATA_DIR}" --data-type frame --frames-number "${T}" --split-by number

run_single() {
    python -m spikingjelly.activation_based.examples.classify_dvsg \
        -T "${T}" -device cuda:0 -b "${BATCH}" -epochs "${EPOCHS}" \
        -data-dir "${DATA_DIR}" -out-dir "${OUT_DIR}" \
        -amp -cupy -opt adam -lr 0.001 -j "${WORKERS}" \
        2>&1 | tee "${OUT_DIR}/train_single.log"
}

run_ddp() {
    local NGPU
    NGPU=$(nvidia-smi -L | wc -l)
    export NCCL_DEBUG=WARN
    torchrun --standalone --nproc_per_node="${NGPU}" \
        -m spikingjelly.activation_based.model.train_classify \
        --data-path "${DATA_DIR}" --output-dir "${OUT_DIR}/ddp" \
        --model sew_resnet18 --T "${T}" --batch-size "${BATCH}" --epochs "${EPOCHS}" \
        --lr 0.1 --lr-scheduler cosa --opt sgd --amp --cupy \
        --sync-bn --workers "${WORKERS}" \
        2>&1 | tee "${OUT_DIR}/train_ddp.log"
}

run_sweep() {
    # one process per GPU, each with a different surrogate function / tau
    local gpu=0
    for tau in 2.0 4.0 8.0; do
        CUDA_VISIBLE_DEVICES=${gpu} nohup python -m spikingjelly.activation_based.examples.classify_dvsg \
            -T "${T}" -device cuda -b "${BATCH}" -epochs "${EPOCHS}" -tau "${tau}" \
            -data-dir "${DATA_DIR}" -out-dir "${OUT_DIR}/tau_${tau}" \
            -amp -cupy -opt adam -lr 0.001 -j 4 \
            > "${OUT_DIR}/sweep_tau_${tau}.log" 2>&1 &
        gpu=$((gpu + 1))
    done
    wait
}

case "${MODE}" in
    single) run_single ;;
    ddp) run_ddp ;;
    sweep) run_sweep ;;
    *)
        echo "unknown mode ${MODE}; expected single|ddp|sweep" >&2
        exit 1
        ;;
esac

echo "== finished; best checkpoints =="
find "${OUT_DIR}" -name 'checkpoint_max.pth' -printf '%TY-%Tm-%Td %TH:%TM  %p\n' | sort
