#!/bin/bash
# SGRAF on Flickr30K: train SAF and SGR separately, then evaluate the ensemble.
# One 1080Ti/2080Ti per model is enough (batch 128, bi-GRU text encoder).

DATA=./data
VOCAB=./data/vocab
GPU_SAF=${GPU_SAF:-0}
GPU_SGR=${GPU_SGR:-1}

export PYTHONUNBUFFERED=1
export CUDA_DEVICE_ORDER=PCI_BUS_ID

echo "==== GPUs on $(hostname) ===="
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

mkdir -p runs/f30k_SAF/log runs/f30k_SGR/log

# SAF and SGR can run in parallel on two cards
python train.py --data_name f30k_precomp --num_epochs 40 --lr_update 30 \
    --module_name SAF --data_path ${DATA} --vocab_path ${VOCAB} \
    --logger_name runs/f30k_SAF/log --model_name runs/f30k_SAF/checkpoint \
    --gpuid ${GPU_SAF} > runs/f30k_SAF/train.log 2>&1 &
PID_SAF=$!

python train.py --data_name f30k_precomp --num_epochs 40 --lr_update 30 \
    --module_name SGR --data_path ${DATA} --vocab_path ${VOCAB} \
    --logger_name runs/f30k_SGR/log --model_name runs/f30k_SGR/checkpoint \
    --gpuid ${GPU_SGR} > runs/f30k_SGR/train.log 2>&1 &
PID_SGR=$!

wait ${PID_SAF} ${PID_SGR}

# ensemble evaluation on the 1K test split (single card)
CUDA_VISIBLE_DEVICES=${GPU_SAF} CUDA_LAUNCH_BLOCKING=0 python evaluation.py \
    --data_path ${DATA} --split test --gpu ${GPU_SAF} \
    --model_paths runs/f30k_SGR/checkpoint/model_best.pth.tar runs/f30k_SAF/checkpoint/model_best.pth.tar
