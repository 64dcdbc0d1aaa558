#!/bin/bash
# MGP-STR base (ViT-B, patch 4x4, 32x128 input) on MJSynth + SynthText.
# Reference setup: 1 node, 4x V100 32GB, ~3 days for 2M iterations with --amp.
#
# usage: bash scripts/train_mgp_str_base.sh <saved_path>

SAVED_PATH=${1:-./saved_models}
NPROC=4
MASTER_PORT=${MASTER_PORT:-29501}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=4

python3 -m torch.distributed.launch --nproc_per_node=${NPROC} --master_port=${MASTER_PORT} --use_env \
    train_final_dist.py \
    --train_data data/training --valid_data data/evaluation \
    --select_data MJ-ST --batch_ratio 0.5-0.5 \
    --Transformer mgp-str --TransformerModel=mgp_str_base_patch4_3_32_128 \
    --imgH 32 --imgW 128 --manualSeed=226 --workers=12 --isrand_aug --scheduler \
    --batch_size=100 --rgb --saved_path ${SAVED_PATH} --exp_name mgp_str_patch4_3_32_128 \
    --valInterval 5000 --num_iter 2000000 --lr 1 --amp

# Evaluate the best checkpoint on the 6 common benchmarks (one GPU is enough)
CUDA_VISIBLE_DEVICES=0 python3 test_final.py --eval_data data/evaluation --benchmark_all_eval \
    --Transformer mgp-str --data_filtering_off --rgb --fast_acc --TransformerModel=mgp_str_base_patch4_3_32_128 \
    --model_dir ${SAVED_PATH}/mgp_str_patch4_3_32_128-Seed226/best_accuracy.pth
