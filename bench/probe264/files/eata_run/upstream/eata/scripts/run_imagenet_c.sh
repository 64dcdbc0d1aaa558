#!/usr/bin/env bash
# ImageNet-C (level 5) sweep for Tent / ETA / EATA, ResNet-50.
# bash scripts/run_imagenet_c.sh <gpu> <imagenet root> <imagenet-c root>
set -e

GPU=$1
DATA=${2:-/dockerdata/imagenet}
DATA_C=${3:-/dockerdata/imagenet-c}
OUT=./exps/imagenet_c_$(date +%m%d)

export OMP_NUM_THREADS=4

nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv -i ${GPU}

for ALG in tent eta eata; do
  for EXP in continual each_shift_reset; do
    CUDA_VISIBLE_DEVICES=${GPU} python3 main.py \
      --data ${DATA} --data_corruption ${DATA_C} \
      --output ${OUT}/${ALG}_${EXP} \
      --algorithm ${ALG} --exp_type ${EXP} \
      --gpu 0 --test_batch_size 64 --workers 8 \
      --e_margin 2.763102111592855 --d_margin 0.05 \
      --fisher_size 2000 --fisher_alpha 2000
  done
done

# batch-size ablation (Table 7), EATA only
for BS in 16 32 128; do
  CUDA_VISIBLE_DEVICES=${GPU} python3 main.py --data ${DATA} --data_corruption ${DATA_C} \
    --output ${OUT}/eata_bs${BS} --algorithm eata --exp_type continual --test_batch_size ${BS}
done
