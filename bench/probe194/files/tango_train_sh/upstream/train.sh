#!/bin/bash
# Tango (flan-t5-large + LDM UNet) on AudioCaps, 4 x A100 40GB, effective batch 64
export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

accelerate launch --multi_gpu --num_processes 4 --mixed_precision fp16 train.py \
--text_encoder_name="google/flan-t5-large" --scheduler_name="stabilityai/stable-diffusion-2-1" \
--unet_model_config="configs/diffusion_model_config.json" --freeze_text_encoder --augment \
--train_file="data/train_audiocaps.json" --validation_file="data/valid_audiocaps.json" --test_file="data/test_audiocaps_subset.json" \
--gradient_accumulation_steps 8 --per_device_train_batch_size 2 --per_device_eval_batch_size 2 \
--learning_rate 3e-5 --num_train_epochs 40 --snr_gamma 5 --allow_tf32 \
--text_column captions --audio_column location --checkpointing_steps="best"
