#!/bin/bash
# Train the MONAI MIL model (att_trans) on PANDA with all GPUs of this node.
#
#   bash run_panda_mil.sh /data/PandaChallenge2020/train_images ./logs_att_trans
#
# Each WSI bag holds 44 tiles of 256x256 at level 1; 4 bags per GPU need ~20 GB of GPU memory with --amp.

set -e

DATA_ROOT=${1:-/PandaChallenge2020/train_images/}
LOGDIR=${2:-./logs_att_trans}
MIL_MODE=${MIL_MODE:-att_trans}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=4

NGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "Found ${NGPU} GPU(s), CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES}"

DIST_FLAGS="--distributed"
if [ "${NGPU}" -lt 2 ]; then
    echo "Single GPU: running without --distributed"
    DIST_FLAGS=""
fi

mkdir -p "${LOGDIR}"

python -u panda_mil_train_evaluate_pytorch_gpu.py \
    --data_root="${DATA_ROOT}" \
    --amp \
    ${DIST_FLAGS} \
    --mil_mode="${MIL_MODE}" \
    --batch_size=4 \
    --epochs=50 \
    --workers=4 \
    --logdir="${LOGDIR}" 2>&1 | tee "${LOGDIR}/train.log"

# Evaluate the best checkpoint on the validation split (all tiles of each WSI).
python -u panda_mil_train_evaluate_pytorch_gpu.py \
    --data_root="${DATA_ROOT}" \
    --amp \
    --mil_mode="${MIL_MODE}" \
    --checkpoint="${LOGDIR}/model.pt" \
    --validate
