#!/usr/bin/env bash
# Spatial pre-training of HyperSIGMA (ViT-B) on HyperGlobal-450K, one node with 8 GPUs.
# usage: bash scripts/pretrain.sh [DATA_PATH] [OUTPUT_DIR]

DATA_PATH=${1:-/data/HyperGlobal-450K}
OUTPUT_DIR=${2:-./output/spat_mae_b}
NGPUS=8
MASTER_PORT=${MASTER_PORT:-29512}

# show what we are running on
nvidia-smi

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=1

mkdir -p ${OUTPUT_DIR}

python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=${MASTER_PORT} \
    main_pretrain.py \
    --model spat_mae_b \
    --data_path ${DATA_PATH} \
    --output_dir ${OUTPUT_DIR} \
    --log_dir ${OUTPUT_DIR} \
    --input_size 64 \
    --in_chans 100 \
    --batch_size 64 \
    --accum_iter 1 \
    --mask_ratio 0.75 \
    --epochs 1600 \
    --warmup_epochs 40 \
    --blr 1.5e-4 \
    --weight_decay 0.05 \
    --num_workers 10 \
    2>&1 | tee ${OUTPUT_DIR}/train.log
