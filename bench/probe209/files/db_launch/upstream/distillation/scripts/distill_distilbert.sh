#!/bin/bash
# Distil bert-base-uncased into DistilBERT on one node with 8 GPUs (V100 32GB).
# The environment variables below are read by utils.init_gpu_params().

export NODE_RANK=0
export N_NODES=1

export N_GPU_NODE=8
export WORLD_SIZE=8
export MASTER_PORT=29501
export MASTER_ADDR=127.0.0.1

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_ASYNC_ERROR_HANDLING=1

DUMP=serialization_dir/distilbert_base_uncased_$(date +%Y%m%d)

pkill -f 'python -u train.py'

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
        --teacher_type bert \
        --teacher_name bert-base-uncased \
        --alpha_ce 0.33 --alpha_mlm 0.33 --alpha_cos 0.33 --alpha_clm 0.0 --mlm \
        --freeze_pos_embs \
        --dump_path $DUMP \
        --data_file data/binarized_text.bert-base-uncased.pickle \
        --token_counts data/token_counts.bert-base-uncased.pickle \
        --fp16 --fp16_opt_level O1
