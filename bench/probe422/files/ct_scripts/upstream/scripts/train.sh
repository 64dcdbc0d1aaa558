#!/bin/sh
# Usage: sh scripts/train.sh <exp_name> <config_path> <dataset> <stage>
#   e.g. sh scripts/train.sh CodeTalker_s1 config/vocaset/stage1.yaml vocaset s1
export PYTHONPATH=./
set -x

exp_name=$1
config=$2
dataset=$3
stage=$4

exp_dir=RUN/${dataset}/${exp_name}
model_dir=${exp_dir}/model
now=$(date +"%Y%m%d_%H%M%S")

mkdir -p ${model_dir}
cp scripts/train.sh main/train_vq.py main/train_pred.py ${config} ${exp_dir}

if [ "${stage}" = "s1" ]; then
  python -u main/train_vq.py \
    --config=${config} \
    save_path ${exp_dir} \
    2>&1 | tee ${exp_dir}/train-$now.log
elif [ "${stage}" = "s2" ]; then
  python -u main/train_pred.py \
    --config=${config} \
    save_path ${exp_dir} \
    2>&1 | tee ${exp_dir}/train-$now.log
else
  echo "unknown stage: ${stage} (expected s1 or s2)"
  exit 1
fi
