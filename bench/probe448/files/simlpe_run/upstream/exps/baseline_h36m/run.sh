#!/usr/bin/env bash
# Train + evaluate siMLPe on Human3.6M (single GPU is enough, ~2h on a V100)
set -e

SEED=${SEED:-888}
EXP=${EXP:-baseline_h36m_${SEED}.txt}

export CUDA_VISIBLE_DEVICES=${GPU:-0}

cd "$(dirname "$0")"

python train.py --seed ${SEED} --exp-name ${EXP} \
    --layer-norm-axis spatial --with-normalization --num 48

# evaluate the last snapshot
python test.py --model-pth log/snapshot/model-iter-40000.pth
