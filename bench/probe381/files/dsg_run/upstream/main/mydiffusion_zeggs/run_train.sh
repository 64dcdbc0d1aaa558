#!/usr/bin/env bash
# Train DiffuseStyleGesture on ZEGGS (single GPU).
# usage: bash run_train.sh <physical gpu id> [config]
set -e

GPU=${1:-0}
CONFIG=${2:-./configs/DiffuseStyleGesture.yml}

cd "$(dirname "$0")"

# WavLM features are extracted on the fly by the dataloader; make sure the
# checkpoint is present before we grab a GPU for 3 days.
if [ ! -f ./WavLM/WavLM-Large.pt ]; then
    echo "WavLM-Large.pt not found, download it into ./WavLM first"
    exit 1
fi

export PYTHONPATH=$PYTHONPATH:$(pwd)/..:$(pwd)/../model:$(pwd)/../train

# the process only sees the selected card, so inside python it is always cuda:0
CUDA_VISIBLE_DEVICES=$GPU python end2end.py --config=$CONFIG --no_cuda 0 --gpu 0 2>&1 | tee train_gpu${GPU}.log
