#!/bin/bash
# DARTS (second order) on CIFAR-10: four independent searches with different seeds, one per GPU,
# then retrain the best genotype for 600 epochs on GPU 0.
#
#   bash scripts/run_search.sh            # uses GPUs 0-3
#   GPUS="4 5 6 7" bash scripts/run_search.sh
set -e

cd "$(dirname "$0")/../cnn"
GPUS=(${GPUS:-0 1 2 3})
SEEDS=(2 3 4 5)
mkdir -p logs

for i in "${!SEEDS[@]}"; do
  seed=${SEEDS[$i]}
  gpu=${GPUS[$i]}
  echo "search seed=${seed} on GPU ${gpu}"
  # each process only sees its own card, so --gpu is always 0 inside the process
  CUDA_VISIBLE_DEVICES=${gpu} nohup python train_search.py --unrolled --seed ${seed} --gpu 0 \
      --save seed${seed} > logs/search_seed${seed}.log 2>&1 &
done
wait

# pick the genotype with the best final valid_acc
best=$(grep -H "valid_acc" logs/search_seed*.log | tail -n 4 | sort -k4 -n | tail -n 1 | cut -d: -f1)
echo "best search log: ${best}"

# augment: retrain from scratch with auxiliary tower + cutout
CUDA_VISIBLE_DEVICES=${GPUS[0]} python train.py --auxiliary --cutout --arch DARTS_V2 --gpu 0 \
    --save retrain > logs/retrain.log 2>&1
