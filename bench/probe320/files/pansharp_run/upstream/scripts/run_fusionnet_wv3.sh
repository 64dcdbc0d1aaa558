#!/usr/bin/env bash
# Train + test FusionNet on the WorldView-3 split of PanCollection.
#
#   bash scripts/run_fusionnet_wv3.sh            # picks the least-loaded GPU
#   GPU=2 bash scripts/run_fusionnet_wv3.sh      # force a GPU
#
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${DATA:-/Data/DataSet/pansharpening}
SENSOR=wv3
EPOCHS=${EPOCHS:-400}
BS=${BS:-32}
LOG_DIR=${ROOT}/logs/fusionnet_${SENSOR}_$(date +%Y%m%d_%H%M%S)
mkdir -p "${LOG_DIR}"

# ---------------------------------------------------------------------------
# pick a GPU: the one with the least memory in use, unless $GPU is given
# ---------------------------------------------------------------------------
if [ -z "${GPU:-}" ]; then
    GPU=$(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits | sort -t, -k2 -n | head -n 1 | cut -d, -f1)
fi
export CUDA_VISIBLE_DEVICES=${GPU}
echo "[run] using GPU ${GPU}" | tee -a "${LOG_DIR}/run.log"
nvidia-smi -i "${GPU}" --query-gpu=name,driver_version,memory.total --format=csv | tee -a "${LOG_DIR}/run.log"

# make cuDNN pick deterministic kernels where it can
export CUBLAS_WORKSPACE_CONFIG=:4096:8
export OMP_NUM_THREADS=8

cd "${ROOT}/FusionNet"

python train.py \
    --epochs "${EPOCHS}" \
    --batch_size "${BS}" \
    --spectral_num 8 \
    --train_h5 "${DATA}/training_data/train_${SENSOR}.h5" \
    --valid_h5 "${DATA}/training_data/valid_${SENSOR}.h5" \
    --out_dir "${ROOT}/Weights/FusionNet/${SENSOR}" \
    2>&1 | tee -a "${LOG_DIR}/train.log"

for TEST in test_${SENSOR}_multiExm1 test_${SENSOR}_OrigScale_multiExm1; do
    python test.py \
        --test_h5 "${DATA}/test_data/${SENSOR^^}/${TEST}.h5" \
        --ckpt "${ROOT}/Weights/FusionNet/${SENSOR}/${EPOCHS}.pth" \
        --spectral_num 8 \
        --img_scale 2047 \
        --gpu 0 \
        --save_dir "${ROOT}/results/FusionNet/${SENSOR}/${TEST}" \
        2>&1 | tee -a "${LOG_DIR}/test.log"
done

echo "[run] done, logs in ${LOG_DIR}"
