#!/bin/bash
# Fine-tune TinyChart-3B (TinyLLaVA-3.1B init, SigLIP-768 + ToMe) on ChartQA/Chart-to-Table/ChartQA-PoT/ChartCoT.
# Tested on a single node with 8x A100-80G, ~26h for 3 epochs.

LLM_PATH=bczhou/TinyLLaVA-3.1B
VIT_PATH=pretrained_models/siglip-so400m-patch14-384-768
DATA_PATH=data/train.json
IMAGE_FOLDER=data/images
OUTPUT_DIR=checkpoints/TinyChart-3B-768

export NCCL_P2P_LEVEL=NVL
export WANDB_DISABLED=true

deepspeed tinychart/train/train_mem.py \
    --deepspeed scripts/zero2.json \
    --model_name_or_path $LLM_PATH \
    --version phi \
    --data_path $DATA_PATH \
    --image_folder $IMAGE_FOLDER \
    --vision_tower $VIT_PATH \
    --mm_projector_type mlp2x_gelu \
    --tune_entire_model True \
    --tune_vit_from_layer 0 \
    --tome_r 84 \
    --mm_vision_select_layer -2 \
    --mm_use_im_start_end False \
    --mm_use_im_patch_token False \
    --image_aspect_ratio pad \
    --group_by_modality_length False \
    --bf16 True \
    --output_dir $OUTPUT_DIR \
    --num_train_epochs 3 \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 2 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 5000 \
    --save_total_limit 1 \
    --learning_rate 1e-4 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 3072 \
    --gradient_checkpointing True \
    --dataloader_num_workers 8 \
    --lazy_preprocess True \
    --report_to tensorboard \
    2>&1 | tee $OUTPUT_DIR/train.log
