#!/usr/bin/env bash
# Train the VoxelMorph baselines on the preprocessed OASIS-1 subset (neurite-oasis.v1.0).
#
#   bash scripts/torch/train_oasis.sh            # scan-to-atlas, MSE, GPU 0
#   GPU=1 LOSS=ncc bash scripts/torch/train_oasis.sh
#
# Each run fits on a single 12 GB GPU with batch size 1 at 160x192x224.
set -euo pipefail

GPU=${GPU:-0}
LOSS=${LOSS:-mse}
LAMBDA=${LAMBDA:-0.01}
DATA_ROOT=${DATA_ROOT:-/data/neurite-oasis}
OUT_ROOT=${OUT_ROOT:-./runs/oasis}
EPOCHS=${EPOCHS:-1500}

RUN_NAME="vxm_${LOSS}_l${LAMBDA}"
OUT_DIR="${OUT_ROOT}/${RUN_NAME}"
mkdir -p "${OUT_DIR}"

# build the training list once
if [ ! -f "${OUT_ROOT}/train_list.txt" ]; then
    ls "${DATA_ROOT}"/OASIS_OAS1_*_MR1/aligned_norm.nii.gz | head -n 394 > "${OUT_ROOT}/train_list.txt"
fi

# record the hardware next to the checkpoints
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "${OUT_DIR}/gpu.csv"

export CUDA_VISIBLE_DEVICES=${GPU}
export OMP_NUM_THREADS=4

echo "[$(date)] training ${RUN_NAME} on GPU ${GPU}"
python scripts/torch/train.py \
    --img-list "${OUT_ROOT}/train_list.txt" \
    --atlas "${DATA_ROOT}/atlas/atlas_norm.npz" \
    --model-dir "${OUT_DIR}" \
    --gpu "${GPU}" \
    --image-loss "${LOSS}" \
    --lambda "${LAMBDA}" \
    --epochs "${EPOCHS}" \
    --int-steps 7 \
    --int-downsize 2 \
    --log-file "${OUT_DIR}/train.log" 2>&1 | tee -a "${OUT_DIR}/stdout.log"

echo "[$(date)] done, checkpoints in ${OUT_DIR}"
