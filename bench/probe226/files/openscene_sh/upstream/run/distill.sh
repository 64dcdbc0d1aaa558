#!/bin/sh
# Usage: sh run/distill.sh <exp_dir> <config>
# e.g.   sh run/distill.sh out/scannet_lseg config/scannet/distill_lseg.yaml
#
# Trains on the GPUs listed in DISTILL.train_gpu; the script below narrows the
# visible devices first so that the indices in the yaml map onto physical GPUs 0..3.

set -x

exp_dir=$1
config=$2

export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}
export OMP_NUM_THREADS=8
# MinkowskiEngine needs a big stack for its hash map on large scenes
ulimit -s unlimited

mkdir -p ${exp_dir}
result_dir=${exp_dir}/result_eval

model_dir=${exp_dir}/model
result_dir=${exp_dir}/result
mkdir -p ${model_dir} ${result_dir}
mkdir -p ${result_dir}/last
mkdir -p ${result_dir}/best

cp run/distill.sh run/distill.py ${config} ${exp_dir}

export PYTHONPATH=.
echo "visible GPUs: ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python -u run/distill.py \
  --config=${config} \
  save_path ${exp_dir} \
  2>&1 | tee -a ${exp_dir}/distill-$(date +"%Y%m%d_%H%M").log
