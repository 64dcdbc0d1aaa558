#!/usr/bin/env bash
# Distil bert-base-uncased into DistilBERT on one node with 4 GPUs.
# Adapted from the "multi-GPU" command of the distillation README; run from examples/research_projects/distillation.
#
# Usage: bash scripts/train_distilbert_multi_gpu.sh [DUMP_PATH]

set -e

DUMP_PATH=${1:-serialization_dir/distilbert_base_uncased_$(date +%Y%m%d_%H%M)}

export NODE_RANK=0
export N_NODES=1

export N_GPU_NODE=4
export WORLD_SIZE=4
export MASTER_PORT=29512
export MASTER_ADDR=127.0.0.1

# pin the job to the first four cards of the box
export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=8

# make sure a previous run is not still holding the GPUs
pkill -f 'python -u train.py' || true

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python -m torch.distributed.launch \
    --nproc_per_node=$N_GPU_NODE \
    --nnodes=$N_NODES \
    --node_rank $NODE_RANK \
    --master_addr $MASTER_ADDR \
    --master_port $MASTER_PORT \
    train.py \
        --force \
        --n_gpu $WORLD_SIZE \
        --student_type distilbert \
        --student_config training_configs/distilbert-base-uncased.json \
        --student_pretrained_weights serialization_dir/tf_bert-base-uncased_0247911.pth \
        --teacher_type bert \
        --teacher_name bert-base-uncased \
        --alpha_ce 5.0 --alpha_mlm 2.0 --alpha_cos 1.0 --alpha_clm 0.0 --mlm \
        --freeze_pos_embs \
        --fp16 --fp16_opt_level O1 \
        --batch_size 5 --gradient_accumulation_steps 50 \
        --dump_path "$DUMP_PATH" \
        --data_file data/binarized_text.bert-base-uncased.pickle \
        --token_counts data/token_counts.bert-base-uncased.pickle
