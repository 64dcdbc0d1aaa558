#!/bin/bash
# Train + evaluate the congestion predictor on ISPD2015 features.
# usage: bash scripts/run_congestion.sh [gpus] [tag]
#   bash scripts/run_congestion.sh 0,1,2,3 unet_attn
set -e

GPUS=${1:-0,1,2,3}
TAG=${2:-unet_attn}
DATA=${DATA:-./data/ispd2015}
OUT=runs/${TAG}_$(date +%Y%m%d_%H%M)

export CUDA_VISIBLE_DEVICES=${GPUS}
NUM_GPUS=$(echo ${GPUS} | tr ',' '\n' | wc -l)
# ids passed to the script are relative to CUDA_VISIBLE_DEVICES
GPU_IDS=$(seq -s, 0 $((NUM_GPUS - 1)))

export OMP_NUM_THREADS=8
export PYTHONPATH=$(pwd):${PYTHONPATH}

echo "training on ${NUM_GPUS} GPU(s): ${GPUS}"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

mkdir -p ${OUT}
python train_congestion.py \
    --data ${DATA} \
    --split splits/ispd2015.json \
    --out ${OUT} \
    --gpu_ids ${GPU_IDS} \
    --batch_size $((8 * NUM_GPUS)) \
    --epochs 80 \
    --lr 1e-3 \
    --amp 2>&1 | tee ${OUT}/stdout.log

# evaluation on the held-out designs, single GPU is enough
CUDA_VISIBLE_DEVICES=${GPUS%%,*} python eval_congestion.py \
    --data ${DATA} \
    --split splits/ispd2015.json \
    --ckpt ${OUT}/best.pth \
    --save_maps ${OUT}/maps

python tools/plot_maps.py --maps ${OUT}/maps --out ${OUT}/figs
echo "done: ${OUT}"
