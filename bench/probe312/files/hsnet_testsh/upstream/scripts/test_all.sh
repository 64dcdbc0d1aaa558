#!/bin/bash
# Evaluate the released HSNet checkpoints on all four folds.
#   GPU=1 BENCH=pascal NSHOT=5 bash scripts/test_all.sh
set -e

export CUDA_VISIBLE_DEVICES=${GPU:-0}

BENCH=${BENCH:-pascal}
BACKBONE=${BACKBONE:-resnet101}
NSHOT=${NSHOT:-1}
DATAPATH=${DATAPATH:-../Datasets_HSN}
CKPT_ROOT=${CKPT_ROOT:-./logs/released}

echo "Testing HSNet (${BACKBONE}) on ${BENCH}, ${NSHOT}-shot, device ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv

for FOLD in 0 1 2 3
do
    CKPT=${CKPT_ROOT}/${BENCH}/${BACKBONE}/fold${FOLD}/best_model.pt
    if [ ! -f "${CKPT}" ]; then
        echo "missing checkpoint: ${CKPT}" && exit 1
    fi
    python test.py --backbone ${BACKBONE} \
                   --fold ${FOLD} \
                   --benchmark ${BENCH} \
                   --nshot ${NSHOT} \
                   --load ${CKPT} \
                   --datapath ${DATAPATH} \
                   --bsz 1 \
                   --nworker 0
done
echo "done: logs are under ./logs/_TEST_*"
