#!/bin/bash
# Train SAR-DDPM on 4 GPUs of one node (one MPI rank per GPU).
# dist_util.setup_dist() pins every rank to GPU (rank % 8).

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OPENAI_LOGDIR=./logs/sarddpm

MODEL_FLAGS="--large_size 256 --small_size 256 --num_channels 192 --num_res_blocks 2 \
  --num_heads 4 --attention_resolutions 32,16,8 --learn_sigma True --resblock_updown True \
  --use_scale_shift_norm True --use_fp16 True"
DIFFUSION_FLAGS="--diffusion_steps 1000 --noise_schedule linear"
TRAIN_FLAGS="--lr 1e-4 --batch_size 2 --save_interval 2000 --max_steps 50000"

mpiexec -n 4 python scripts/sarddpm_train.py $MODEL_FLAGS $DIFFUSION_FLAGS $TRAIN_FLAGS \
  --pretrained_model ./weights/256x256_diffusion_uncond.pt
