#!/bin/bash
# Train VisualVoice on VoxCeleb2 (2-speaker mixtures) with 8 GPUs.
# Expects the mouth ROIs / audio in hdf5 produced by the preprocessing scripts.

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

DATA_ROOT=/mnt/data/VoxCeleb2
CKPT_DIR=checkpoints/
NAME=exp_visualvoice_vox2

python train.py \
    --name $NAME \
    --gpu_ids 0,1,2,3,4,5,6,7 \
    --batchSize 128 \
    --nThreads 32 \
    --data_path $DATA_ROOT/mp4/ \
    --mouthroi_root $DATA_ROOT/mouth_roi_hdf5/ \
    --audio_root $DATA_ROOT/audio_hdf5/ \
    --checkpoints_dir $CKPT_DIR \
    --lipreading_config_path configs/lrw_snv1x_tcn2x.json \
    --weights_lipreadingnet pretrained_models/lipreading_best.pth \
    --audio_window 2.55 \
    --num_frames 64 \
    --audio_sampling_rate 16000 \
    --visual_pool maxpool \
    --audio_pool maxpool \
    --unet_ngf 64 \
    --unet_input_nc 2 \
    --unet_output_nc 2 \
    --identity_feature_dim 128 \
    --audioVisual_feature_dim 1152 \
    --compression_type none \
    --mask_clip_threshold 5 \
    --mask_loss_type L1 \
    --use_coseparation_loss \
    --coseparation_loss_weight 0.01 \
    --crossmodal_loss_weight 0.01 \
    --margin 0.5 \
    --lr_lipreading 0.0001 \
    --lr_facial_attributes 0.00001 \
    --lr_unet 0.0001 \
    --lr_vocal_attributes 0.00001 \
    --optimizer adam \
    --weight_decay 0.0001 \
    --niter 1 \
    --display_freq 10 \
    --save_latest_freq 500 \
    --validation_on \
    --validation_freq 200 \
    --validation_batches 30 \
    --tensorboard True \
    --lipreading_extract_feature \
    |& tee logs/$NAME.log
