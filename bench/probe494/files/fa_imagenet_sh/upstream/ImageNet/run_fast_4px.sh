#!/bin/bash
# Three-phase fast adversarial training on ImageNet (eps = 4/255), 4 GPUs on one node.
# Phase 1: 128px, phase 2: 224px, phase 3: 288px. Each phase resumes from the previous checkpoint.
set -e

DATA160=/data/imagenet-sz/160
DATA352=/data/imagenet-sz/352
DATA=/data/imagenet

NAME=eps4

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN

nvidia-smi

python -m torch.distributed.launch --nproc_per_node=4 main_fast.py $DATA160 \
    -c configs/configs_fast_phase1.yml --output_prefix fast_adv_phase1_${NAME} \
    --restarts 1

python -m torch.distributed.launch --nproc_per_node=4 main_fast.py $DATA352 \
    -c configs/configs_fast_phase2.yml --output_prefix fast_adv_phase2_${NAME} \
    --resume trained_models/fast_adv_phase1_${NAME}_step2_eps4_repeat1/checkpoint_epoch6.pth.tar

python -m torch.distributed.launch --nproc_per_node=4 main_fast.py $DATA \
    -c configs/configs_fast_phase3.yml --output_prefix fast_adv_phase3_${NAME} \
    --resume trained_models/fast_adv_phase2_${NAME}_step2_eps4_repeat1/checkpoint_epoch12.pth.tar

# Final evaluation with 10 random restarts of PGD-50
python main_fast.py $DATA -c configs/configs_fast_phase3.yml \
    --output_prefix fast_adv_phase3_${NAME} \
    --resume trained_models/fast_adv_phase3_${NAME}_step2_eps4_repeat1/model_best.pth.tar \
    --evaluate --restarts 10
