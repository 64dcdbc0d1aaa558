#!/usr/bin/env bash
# Fine-tune SpanBERT (cased) on SQuAD 1.1 / 2.0 with a single V100.
# usage: bash scripts/finetune_squad.sh {base|large} {1.1|2.0}
set -euo pipefail

SIZE=${1:-base}
VERSION=${2:-1.1}
DATA_DIR=${DATA_DIR:-data/squad}
OUT=squad${VERSION}_spanbert_${SIZE}

export CUDA_VISIBLE_DEVICES=${GPU:-0}

EXTRA=""
if [ "$VERSION" == "2.0" ]; then
  EXTRA="--version_2_with_negative"
fi

echo "Running on $(hostname) with GPU(s) ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

python code/run_squad.py \
  --do_train \
  --do_eval \
  --model spanbert-${SIZE}-cased \
  --train_file ${DATA_DIR}/train-v${VERSION}.json \
  --dev_file ${DATA_DIR}/dev-v${VERSION}.json \
  --train_batch_size 32 \
  --eval_batch_size 32 \
  --learning_rate 2e-5 \
  --num_train_epochs 4 \
  --max_seq_length 512 \
  --doc_stride 128 \
  --eval_metric f1 \
  --output_dir ${OUT} \
  --fp16 ${EXTRA}
