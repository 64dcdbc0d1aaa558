#!/usr/bin/env bash
# Train DDColor-L on 4 GPUs (single node).
#   bash scripts/train.sh                       # default config
#   CONFIG=options/train/train_ddcolor_tiny.yml bash scripts/train.sh
set -e

CONFIG=${CONFIG:-options/train/train_ddcolor.yml}
NUM_GPUS=${NUM_GPUS:-4}
PORT=${PORT:-3721}

cd "$(dirname "$0")/.."
export PYTHONPATH="$(pwd):${PYTHONPATH}"
export OMP_NUM_THREADS=4

# the perceptual loss and the FID metric need these locally
mkdir -p pretrain
if [ ! -f pretrain/inception_v3_google-1a9a5a14.pth ]; then
    wget -q -P pretrain https://download.pytorch.org/models/inception_v3_google-1a9a5a14.pth
fi

nvidia-smi --query-gpu=index,name,memory.total --format=csv || true

CUDA_VISIBLE_DEVICES=0,1,2,3 \
python -m torch.distributed.launch \
    --nproc_per_node=${NUM_GPUS} \
    --master_port=${PORT} \
    basicsr/train.py -opt ${CONFIG} --auto_resume --launcher pytorch
