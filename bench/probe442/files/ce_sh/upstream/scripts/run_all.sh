#!/usr/bin/env bash
# CE-GZSL (CVPR 2021) -- reproduce Table 2 (GZSL, ResNet-101 features).
# One dataset per GPU; pass the GPU list as the first argument, e.g. `bash scripts/run_all.sh 0,1,2,3`.
set -e

IFS=',' read -r -a GPUS <<< "${1:-0,1,2,3}"
mkdir -p logs

echo "visible GPUs:"
nvidia-smi -L

CUDA_VISIBLE_DEVICES=${GPUS[0]} nohup python CE_GZSL.py --dataset CUB --class_embedding sent --syn_num 100 \
  --batch_size 2048 --attSize 1024 --nz 1024 --embedSize 2048 --outzSize 512 --nhF 2048 \
  --ins_weight 0.001 --cls_weight 0.001 --ins_temp 0.1 --cls_temp 0.1 --manualSeed 3483 \
  --nclass_all 200 --nclass_seen 150 > logs/cub.log 2>&1 &

CUDA_VISIBLE_DEVICES=${GPUS[1]} nohup python CE_GZSL.py --dataset AWA2 --class_embedding att --syn_num 2400 \
  --batch_size 4096 --attSize 85 --nz 85 --embedSize 2048 --outzSize 512 --nhF 2048 \
  --ins_weight 0.001 --cls_weight 0.001 --ins_temp 10.0 --cls_temp 1.0 --manualSeed 9182 \
  --nclass_all 50 --nclass_seen 40 > logs/awa2.log 2>&1 &

CUDA_VISIBLE_DEVICES=${GPUS[2]} nohup python CE_GZSL.py --dataset SUN --class_embedding att --syn_num 100 \
  --batch_size 1024 --attSize 102 --nz 102 --embedSize 2048 --outzSize 512 --nhF 2048 \
  --ins_weight 0.001 --cls_weight 0.001 --ins_temp 0.1 --cls_temp 0.1 --manualSeed 4115 \
  --nclass_all 717 --nclass_seen 645 --lr 5e-5 > logs/sun.log 2>&1 &

CUDA_VISIBLE_DEVICES=${GPUS[3]} nohup python CE_GZSL.py --dataset FLO --class_embedding sent --syn_num 1200 \
  --batch_size 2048 --attSize 1024 --nz 1024 --embedSize 2048 --outzSize 512 --nhF 2048 \
  --ins_weight 0.001 --cls_weight 0.001 --ins_temp 0.1 --cls_temp 0.1 --manualSeed 806 \
  --nclass_all 102 --nclass_seen 82 > logs/flo.log 2>&1 &

wait
echo "all runs finished"
