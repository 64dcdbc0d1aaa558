#!/usr/bin/env bash
# Train a kraken recognition model on a PAGE-XML / ALTO ground truth set.
#
#   scripts/train_recognition.sh data/gt/*.xml
#
# The dataset is first compiled into an Arrow file (much faster to load
# than parsing the XML every epoch), then ketos trains on GPU 0 with
# mixed precision. Set GPU=1 to use the second card.
set -euo pipefail

GPU=${GPU:-0}
NAME=${NAME:-ocr17}
WORKERS=${WORKERS:-8}
OUT=models/${NAME}
mkdir -p "${OUT}" logs

export CUDA_VISIBLE_DEVICES=${GPU}
# avoid oversubscription: ketos uses its own dataloader workers
export OMP_NUM_THREADS=4

echo "== $(date) == host $(hostname)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

if [ ! -f "data/${NAME}.arrow" ]; then
    ketos compile --workers "${WORKERS}" -f page \
        --random-split 0.9 0.1 0.0 \
        -o "data/${NAME}.arrow" "$@"
fi

ketos -v train \
    -f binary \
    -d cuda:0 \
    --precision 16 \
    --workers "${WORKERS}" \
    -B 32 \
    -N 50 --lag 10 --min-epochs 20 \
    --schedule reduceonplateau \
    -r 0.0001 \
    --augment \
    -o "${OUT}/${NAME}" \
    --logger tensorboard --log-dir logs \
    "data/${NAME}.arrow" 2>&1 | tee "logs/${NAME}.train.log"

best=$(ls -t "${OUT}"/${NAME}_best.mlmodel 2>/dev/null | head -n1 || true)
if [ -n "${best}" ]; then
    echo "== evaluating ${best}"
    ketos test -f binary -d cuda:0 -m "${best}" "data/${NAME}.arrow" | tee "logs/${NAME}.test.log"
fi
