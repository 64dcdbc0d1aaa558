#!/bin/bash

# This script requires pytorch >= 1.9 and DeepSpeed built with the transformer
# kernels (DS_BUILD_TRANSFORMER=1) on every node.

base_dir=`pwd`

# Where should we save checkpoints and tensorboard events?
JOB_NAME=lamb_64k_seq128
OUTPUT_DIR=${base_dir}/bert_model_outputs

mkdir -p $OUTPUT_DIR

# 4 nodes x 16 V100-32GB, see deepspeed_bsz64k_lamb_config_seq128.json for the batch math
NCCL_TREE_THRESHOLD=0 NCCL_IB_DISABLE=0 deepspeed \
  --hostfile ${base_dir}/hostfile \
  ${base_dir}/deepspeed_train.py \
  --cf ${base_dir}/bert_large_lamb.json \
  --max_seq_length 128 \
  --output_dir $OUTPUT_DIR \
  --deepspeed \
  --deepspeed_transformer_kernel \
  --print_steps 100 \
  --lr_schedule "EE" \
  --lr_offset 10e-4 \
  --job_name $JOB_NAME \
  --deepspeed_config ${base_dir}/deepspeed_bsz64k_lamb_config_seq128.json \
  --data_path_prefix /data/bert \
  --use_nvidia_dataset \
  &> ${JOB_NAME}.log
