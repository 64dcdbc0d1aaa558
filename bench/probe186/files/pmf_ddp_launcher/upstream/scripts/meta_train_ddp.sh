#!/bin/bash
# Meta-train P>M>F (DINO ViT-S/16 backbone) on Meta-Dataset, single node, 8 GPUs.
#
# Usage:
#   bash scripts/meta_train_ddp.sh <output_dir> [extra args for main.py]
#
# Restrict the GPUs with e.g. CUDA_VISIBLE_DEVICES=0,1,2,3 bash scripts/meta_train_ddp.sh ...

set -x

OUTPUT=${1:-outputs/md_full_128x128_dinosmall_fp16_lr5e-5}
shift

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)

export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0

mkdir -p $OUTPUT
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > $OUTPUT/gpus.csv

python -m torch.distributed.launch --nproc_per_node=$NGPUS --master_port=29501 --use_env main.py \
    --output_dir $OUTPUT \
    --dataset meta_dataset \
    --data-path ../../datasets/meta_dataset \
    --num_workers 8 \
    --base_sources aircraft cu_birds dtd fungi ilsvrc_2012 omniglot quickdraw vgg_flower \
    --arch dino_small_patch16 \
    --deploy finetune \
    --fp16 \
    --epochs 100 \
    --lr 5e-5 \
    --dist-eval \
    "$@" 2>&1 | tee $OUTPUT/train.log
