#!/bin/sh
PARTITION=Segmentation

dataset=$1 # pascal coco
exp_name=$2 # split0_resnet50 ...

exp_dir=exp/${dataset}/${exp_name}
model_dir=${exp_dir}/model
result_dir=${exp_dir}/result
config=config/${dataset}/${dataset}_${exp_name}.yaml
now=$(date +"%Y%m%d_%H%M%S")

mkdir -p ${model_dir} ${result_dir}
cp train.sh train.py ${config} ${exp_dir}

echo ${config}
echo "GPUs are selected via train_gpu in ${config}"

PYTHON=${PYTHON:-python3}
$PYTHON -u train.py --config=${config} 2>&1 | tee ${result_dir}/train-$now.log
