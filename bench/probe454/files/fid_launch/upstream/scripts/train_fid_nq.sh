#!/bin/bash
# Train FiD-base on NaturalQuestions (100 passages) on a single node with 8 GPUs.
# Usage: bash scripts/train_fid_nq.sh [checkpoint_name]
set -e

NAME=${1:-nq_reader_base}
DATA=open_domain_data/NQ

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NGPU=8
export OMP_NUM_THREADS=4

python -m torch.distributed.launch \
    --nproc_per_node=$NGPU \
    --master_port=10847 \
    train_reader.py \
    --train_data $DATA/train.json \
    --eval_data $DATA/dev.json \
    --model_size base \
    --per_gpu_batch_size 1 \
    --n_context 100 \
    --text_maxlength 250 \
    --use_checkpoint \
    --lr 0.00005 \
    --optim adamw \
    --scheduler linear \
    --weight_decay 0.01 \
    --total_steps 15000 \
    --warmup_steps 1000 \
    --accumulation_steps 8 \
    --eval_freq 500 \
    --save_freq 5000 \
    --name $NAME \
    --checkpoint_dir checkpoint

# evaluation of the best checkpoint on the test split (one GPU is enough)
CUDA_VISIBLE_DEVICES=0 python test_reader.py \
    --model_path checkpoint/$NAME/checkpoint/best_dev \
    --eval_data $DATA/test.json \
    --per_gpu_batch_size 1 \
    --n_context 100 \
    --name ${NAME}_test \
    --checkpoint_dir checkpoint
