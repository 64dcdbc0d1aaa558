#!/bin/bash
# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
#
#SBATCH --nodes=8
#SBATCH --gres=gpu:8
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=10
#SBATCH --job-name=swav_800ep_pretrain
#SBATCH --time=72:00:00
#SBATCH --mem=450G

# 64 V100-32GB in total: 8 nodes x 8 GPUs, one task per GPU
module purge
module load anaconda3/2020.02
module load cuda/10.1 cudnn/v7.6.5.32-cuda.10.1 NCCL/2.5.6-1-cuda.10.1
source activate swav

# our cluster has docker bridges on every node, keep NCCL on the IB interface
export NCCL_SOCKET_IFNAME=^docker0,lo

master_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
dist_url="tcp://"
dist_url+=$master_node
dist_url+=:40000

DATASET_PATH="/path/to/imagenet/train"
EXPERIMENT_PATH="./experiments/swav_800ep_pretrain"
mkdir -p $EXPERIMENT_PATH

srun --output=${EXPERIMENT_PATH}/%j.out --error=${EXPERIMENT_PATH}/%j.err --label python -u main_swav.py \
--data_path $DATASET_PATH \
--nmb_crops 2 6 \
--size_crops 224 96 \
--min_scale_crops 0.14 0.05 \
--max_scale_crops 1. 0.14 \
--crops_for_assign 0 1 \
--temperature 0.1 \
--epsilon 0.05 \
--sinkhorn_iterations 3 \
--feat_dim 128 \
--nmb_prototypes 3000 \
--queue_length 3840 \
--epoch_queue_starts 15 \
--epochs 800 \
--batch_size 64 \
--base_lr 4.8 \
--final_lr 0.0048 \
--freeze_prototypes_niters 313 \
--wd 0.000001 \
--warmup_epochs 10 \
--start_warmup 0.3 \
--dist_url $dist_url \
--arch resnet50 \
--use_fp16 true \
--sync_bn pytorch \
--syncbn_process_group_size 32 \
--dump_path $EXPERIMENT_PATH
