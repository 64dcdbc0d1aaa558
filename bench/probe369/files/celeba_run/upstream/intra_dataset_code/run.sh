#!/usr/bin/env bash
# Train AENet on the CelebA-Spoof intra-dataset protocol.
# Tested on 4x V100 (16GB); reduce -b if you run out of GPU memory.

set -e

ROOT=$(cd "$(dirname "$0")"; pwd)
cd "${ROOT}"

DATA_ROOT=${DATA_ROOT:-../data/CelebA_Spoof/}
SNAPSHOT=${SNAPSHOT:-ckpt/AENet_intra}
mkdir -p "$(dirname ${SNAPSHOT})" logs

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=4

python -u main.py \
    --data_root ${DATA_ROOT} \
    --train_list metas/intra_test/train_label.json \
    --val_list metas/intra_test/test_label.json \
    --arch AENet \
    -b 128 -j 16 \
    --lr 0.01 --lr_steps 20 35 45 \
    --epochs 50 \
    --snapshot_pref ${SNAPSHOT} \
    2>&1 | tee logs/train_$(date +%Y%m%d_%H%M%S).log
