#!/usr/bin/env bash
# VAR-d16 on ImageNet 256x256, 8 x A100-80G per node.
# usage: bash scripts/train_var_d16.sh <node_rank> <master_addr>

NODE_RANK=${1:-0}
MASTER_ADDR=${2:-127.0.0.1}
NNODES=${NNODES:-1}

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_IB_HCA=mlx5
export NCCL_DEBUG=INFO
export PYTHONUNBUFFERED=1

# sanity check: print the visible GPUs before launching
nvidia-smi --query-gpu=index,name,memory.total --format=csv

torchrun --nproc_per_node=8 --nnodes=${NNODES} --node_rank=${NODE_RANK} \
  --master_addr=${MASTER_ADDR} --master_port=40000 train.py \
  --depth=16 --bs=768 --ep=200 --fp16=1 --alng=1e-3 --wpe=0.1 \
  --data_path=/path/to/imagenet --local_out_dir_path=./local_output
