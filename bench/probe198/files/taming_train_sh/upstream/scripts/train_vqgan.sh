#!/usr/bin/env bash
# Train a VQGAN first stage on a custom image folder.
#
#   bash scripts/train_vqgan.sh custom_vqgan 0,1
#
# The config name refers to configs/<name>.yaml. Lists of training/test images
# are expected in data/xx_train.txt and data/xx_test.txt (one absolute path per line).
# Note the trailing comma when training on a single GPU: `--gpus 0,`
set -e

CONFIG=${1:-custom_vqgan}
GPUS=${2:-0,1}
NAME=${3:-}

export PYTHONPATH=$(pwd):$PYTHONPATH
export CUDA_VISIBLE_DEVICES=${GPUS}
# lightning 1.x counts devices from the --gpus list, which is re-indexed
# from zero after CUDA_VISIBLE_DEVICES is applied
NGPU=$(echo ${GPUS} | tr ',' '\n' | grep -c .)
DEVICES=$(seq -s, 0 $((NGPU-1))),

# dataloader workers per process
export OMP_NUM_THREADS=8

if [ ! -f "configs/${CONFIG}.yaml" ]; then
    echo "configs/${CONFIG}.yaml not found"
    exit 1
fi

if [ -z "${NAME}" ]; then
    python main.py --base configs/${CONFIG}.yaml -t True --gpus ${DEVICES}
else
    python main.py --base configs/${CONFIG}.yaml -t True --gpus ${DEVICES} -n ${NAME}
fi

# resume:  python main.py --resume logs/<run>/checkpoints/last.ckpt -t True --gpus 0,
