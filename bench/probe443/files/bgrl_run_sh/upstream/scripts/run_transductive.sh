#!/usr/bin/env bash
# Reproduce the transductive results of Table 2.
# Usage: bash scripts/run_transductive.sh <gpu-id> [dataset ...]
set -e

GPU=${1:-0}
shift || true
DATASETS=${@:-"amazon-computers amazon-photos coauthor-cs coauthor-physics wiki-cs"}

export CUDA_VISIBLE_DEVICES=${GPU}

for ds in ${DATASETS}; do
  for seed in 1 2 3 4 5; do
    echo "==> ${ds} (model seed ${seed}) on GPU ${GPU}"
    python3 train_transductive.py \
      --flagfile=config/${ds}.cfg \
      --model_seed=${seed} \
      --logdir=./runs/${ds}/seed${seed}
  done
done

nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv
