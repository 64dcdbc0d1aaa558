#!/bin/bash
# Fine-tune BEATs on ESC-50 / AudioSet-20K with torchrun (single node).
#   bash scripts/run_finetune.sh configs/esc50.yaml 4
CONFIG=${1:-configs/esc50.yaml}
NGPU=${2:-4}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=8

OUT=output/$(basename ${CONFIG%.yaml})_$(date +%Y%m%d_%H%M)
mkdir -p $OUT

torchrun --standalone --nproc_per_node=$NGPU finetune.py \
    --config $CONFIG \
    --output_dir $OUT \
    --amp \
    2>&1 | tee $OUT/train.log
