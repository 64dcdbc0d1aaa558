#!/usr/bin/env bash
# Leave-one-person-out training + evaluation of L2CS-Net on MPIIFaceGaze.
#
#   bash scripts/run_mpiigaze.sh [GPU_ID] [ARCH]
#
# One fold takes ~25 min on a single RTX 3090 with batch 16.
set -eo pipefail

GPU=${1:-0}
ARCH=${2:-ResNet50}
DATA_ROOT=${DATA_ROOT:-datasets/MPIIFaceGaze}
OUT=${OUT:-output/snapshots}
EVAL=${EVAL:-evaluation}
LOG_DIR=logs/mpiigaze_$(date +%Y%m%d_%H%M%S)
mkdir -p "${LOG_DIR}"

# pin the job to one card; train.py/test.py then see it as device 0
export CUDA_VISIBLE_DEVICES=${GPU}
export OMP_NUM_THREADS=8
export PYTHONPATH=$(pwd):${PYTHONPATH}

echo "host: $(hostname)  gpu: ${GPU}  arch: ${ARCH}" | tee "${LOG_DIR}/env.txt"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee -a "${LOG_DIR}/env.txt"
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "${LOG_DIR}/env.txt"

python train.py \
    --dataset mpiigaze \
    --gazeMpiimage_dir "${DATA_ROOT}/Image" \
    --gazeMpiilabel_dir "${DATA_ROOT}/Label" \
    --output "${OUT}" \
    --gpu 0 \
    --num_epochs 50 \
    --batch_size 16 \
    --lr 0.00001 \
    --alpha 1 \
    --arch "${ARCH}" 2>&1 | tee "${LOG_DIR}/train.log"

LATEST=$(ls -td "${OUT}"/L2CS-mpiigaze_* | head -n 1)
echo "evaluating ${LATEST}"

python test.py \
    --dataset mpiigaze \
    --gazeMpiimage_dir "${DATA_ROOT}/Image" \
    --gazeMpiilabel_dir "${DATA_ROOT}/Label" \
    --snapshot "${LATEST}" \
    --evalpath "${EVAL}/$(basename "${LATEST}")" \
    --gpu 0 \
    --batch_size 100 \
    --arch "${ARCH}" 2>&1 | tee "${LOG_DIR}/test.log"

grep -h "MAE" "${EVAL}/$(basename "${LATEST}")"/fold*/mpiigaze.log | sort -t: -k3 -n | head -n 15
