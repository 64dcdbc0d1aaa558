#!/usr/bin/env bash
# Train the M members of a deep ensemble in parallel, one member per GPU
# (round-robin if M > number of GPUs), then evaluate the ensemble.
#
#   M=5 ARCH=resnet18 DATASET=cifar10 bash scripts/train_ensemble_parallel.sh
set -euo pipefail

M=${M:-5}
ARCH=${ARCH:-resnet18}
DATASET=${DATASET:-cifar10}
EPOCHS=${EPOCHS:-200}
OUT=${OUT:-checkpoints/ensemble}
mkdir -p logs "$OUT"

NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "found $NUM_GPUS GPUs, training $M members"

# keep the data loaders from oversubscribing the CPU when 8 jobs run at once
export OMP_NUM_THREADS=4
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

pids=()
for ((m = 0; m < M; m++)); do
  gpu=$((m % NUM_GPUS))
  echo "member $m -> GPU $gpu"
  python deep_ensembles/train_ensemble.py --dataset "$DATASET" --arch "$ARCH" --epochs "$EPOCHS" \
      --num-members 1 --member-offset "$m" --gpu "$gpu" --out "$OUT" --seed 0 \
      > "logs/${DATASET}_${ARCH}_m${m}.log" 2>&1 &
  pids+=($!)
  # members on the same GPU are started one after another
  if (( (m + 1) % NUM_GPUS == 0 )); then
    for pid in "${pids[@]}"; do wait "$pid"; done
    pids=()
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; done

nvidia-smi --query-gpu=index,memory.used --format=csv

CUDA_VISIBLE_DEVICES=0 python deep_ensembles/evaluate_ensemble.py --ckpt-dir "$OUT" --dataset "$DATASET" \
    --arch "$ARCH" --members "$M" --out "results/${DATASET}_${ARCH}_M${M}.json"
