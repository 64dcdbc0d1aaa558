#!/bin/bash
# Retrospective / prospective reconstruction with the pre-trained fastMRI knee score model.
# Download the checkpoint first:  bash download_weights.sh
# One GPU is enough (~7 GB for 320x320); set GPU=<id> to pick a card.

GPU=${GPU:-0}
export CUDA_VISIBLE_DEVICES=$GPU

TASK=retrospective
MASK=gaussian1d
N=2000
M=1

for ACC in 4 8; do
  for DATA in 001 002 003; do
    echo "[score-MRI] task=${TASK} data=${DATA} mask=${MASK} acc=${ACC} on GPU ${GPU}"
    python inference_real.py \
      --task ${TASK} \
      --data ${DATA} \
      --mask_type ${MASK} \
      --acc_factor ${ACC} \
      --center_fraction 0.08 \
      --N ${N} \
      --m ${M}
  done
done

# multi-coil (SSOS) variant
python inference_multi-coil_SSOS.py \
  --data 001 \
  --mask_type uniform1d \
  --acc_factor 4 \
  --center_fraction 0.08 \
  --N ${N} \
  --m ${M}
