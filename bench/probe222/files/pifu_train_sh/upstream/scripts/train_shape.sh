#!/usr/bin/env bash
set -ex

# Training
GPU_ID=0
DISPLAY_ID=$((GPU_ID*10+10))
NAME='pifu_demo'
DEBUG=false

# Network configuration
BATCH_SIZE=4
MLP_DIM='257 1024 512 256 128 1'
MLP_DIM_COLOR='513 1024 512 256 128 3'

# Reconstruction resolution
# NOTE: one can change here to reconstruct mesh in a different resolution.
# VOL_RES=256

# data loading
NUM_THREADS=8
DATAROOT='./training_data'

# make only the selected card visible; the code then always talks to cuda:0
export CUDA_VISIBLE_DEVICES=${GPU_ID}
# fail fast on kernel errors while debugging
if [ "$DEBUG" = true ] ; then
    export CUDA_LAUNCH_BLOCKING=1
fi

# command
python -m apps.train_shape \
    --dataroot ${DATAROOT} \
    --name ${NAME} \
    --gpu_id 0 \
    --batch_size ${BATCH_SIZE} \
    --num_threads ${NUM_THREADS} \
    --pin_memory \
    --random_flip \
    --random_scale \
    --random_trans \
    --num_stack 4 \
    --num_hourglass 2 \
    --norm group \
    --hg_down 'ave_pool' \
    --mlp_dim ${MLP_DIM} \
    --num_sample_inout 5000 \
    --num_epoch 100 \
    --schedule 60 80

# quick check of memory after training
nvidia-smi
