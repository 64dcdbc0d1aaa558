#!/bin/bash
# Pretrain BrainLM (ViT-MAE on UK Biobank fMRI, 424 parcels) on the 4 GPUs of one node.

export CUDA_VISIBLE_DEVICES=0,1,2,3
export WANDB_PROJECT=brainlm
export NCCL_P2P_DISABLE=1   # some of our A6000 nodes hang with P2P enabled

torchrun --nproc_per_node=4 --master_port=29501 train.py \
    --output_dir training-runs/brainlm_ukb_650M \
    --train_dataset_path /data/ukb_arrow/train_ukbiobank \
    --val_dataset_path /data/ukb_arrow/val_ukbiobank \
    --coords_dataset_path /data/ukb_arrow/brain_region_coordinates \
    --hidden_size 512 --num_hidden_layers 8 --num_attention_heads 8 \
    --mask_ratio 0.75 --num_timepoints_per_voxel 200 --timepoint_patching_size 20 \
    --per_device_train_batch_size 64 --per_device_eval_batch_size 64 \
    --num_train_epochs 100 --base_learning_rate 1e-3 --warmup_ratio 0.05 \
    --fp16 True --dataloader_num_workers 8 --dataloader_pin_memory True \
    --evaluation_strategy steps --eval_steps 2000 --save_steps 2000 --logging_steps 100 \
    --ddp_find_unused_parameters False --wandb_logging True
