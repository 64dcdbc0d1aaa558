#!/bin/bash
# Train InvPT on PASCAL-Context with 8 GPUs (ViT-L/16 backbone).
# Use --nproc_per_node equal to the number of GPUs listed in CUDA_VISIBLE_DEVICES.

CONFIG=${CONFIG:-./configs/pascal/pascal_vitLp16.yml}
NGPUS=${NGPUS:-8}

export OMP_NUM_THREADS=4
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

python -m torch.distributed.launch --nproc_per_node=$NGPUS --master_port=$((RANDOM%1000+12000)) \
    main.py --config_exp $CONFIG --run_mode train

# Inference with a trained checkpoint:
# python -m torch.distributed.launch --nproc_per_node=1 main.py --config_exp $CONFIG --run_mode infer --trained_model ./checkpoint.pth.tar
