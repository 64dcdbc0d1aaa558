#!/bin/bash
# Reproduce the SWAG / SWA / SGD numbers on CIFAR-10 and CIFAR-100 (Maddox et al., 2019, Table 1)
# and the corresponding uncertainty (NLL / ECE) evaluations.
#
# Usage:  GPU=1 DATA_PATH=/data bash scripts/run_swag_cifar.sh
set -e

DATA_PATH=${DATA_PATH:-/scratch/datasets}
OUT=${OUT:-ckpts}
GPU=${GPU:-0}
EPOCHS=${EPOCHS:-300}

# quick smoke test (1 epoch) so that a broken environment fails fast
CUDA_VISIBLE_DEVICES=0 python experiments/train/run_swag.py --data_path=$DATA_PATH --epochs=1 \
    --dataset=CIFAR10 --model=VGG16 --lr_init=0.05 --wd=5e-4 --dir=/tmp/swag_smoke

for DATASET in CIFAR10 CIFAR100; do
  for MODEL in VGG16 PreResNet164 WideResNet28x10; do
    if [ "$MODEL" = "VGG16" ]; then
      LR=0.05; WD=5e-4; SWA_LR=0.01
    elif [ "$MODEL" = "PreResNet164" ]; then
      LR=0.1; WD=3e-4; SWA_LR=0.05
    else
      LR=0.1; WD=5e-4; SWA_LR=0.05
    fi
    for SEED in 1 2 3; do
      DIR=$OUT/${DATASET}/${MODEL}/swag_seed${SEED}
      mkdir -p $DIR
      echo "=== $DATASET $MODEL seed $SEED -> $DIR"

      CUDA_VISIBLE_DEVICES=$GPU python experiments/train/run_swag.py \
          --data_path=$DATA_PATH --epochs=$EPOCHS --dataset=$DATASET --save_freq=$EPOCHS \
          --model=$MODEL --lr_init=$LR --wd=$WD --swa --swa_start=161 --swa_lr=$SWA_LR \
          --cov_mat --use_test --seed=$SEED --dir=$DIR 2>&1 | tee $DIR/train.log

      for METHOD in SWAG SGD; do
        CUDA_VISIBLE_DEVICES=$GPU python experiments/uncertainty/uncertainty.py \
            --data_path=$DATA_PATH --dataset=$DATASET --model=$MODEL --method=$METHOD \
            --file=$DIR/swag-$EPOCHS.pt --save_path=$DIR/unc_${METHOD}.npz \
            --cov_mat --use_test --N=30 --scale=0.5 --seed=$SEED
      done
    done
  done
done

python experiments/uncertainty/collect_results.py --root $OUT > $OUT/table1.md
echo "done; results in $OUT/table1.md"
