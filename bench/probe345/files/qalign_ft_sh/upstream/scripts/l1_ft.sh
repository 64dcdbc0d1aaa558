#!/bin/bash
# Fine-tune Q-Align (mPLUG-Owl2 backbone) on KonIQ-10k, "L1" recipe.
# Tested on 4x A100-80G; reduce per_device_train_batch_size on smaller cards.
LOAD='MAGAer13/mplug-owl2-llama2-7b'

DATA_FILE=playground/data/ft/koniq/train_koniq.json

export NCCL_IB_DISABLE=1
export WANDB_PROJECT=q-align

deepspeed --include localhost:0,1,2,3 --master_port 6688 q_align/train/train_mem.py \
    --deepspeed ./scripts/zero3.json \
    --model_name_or_path $LOAD \
    --version v1 \
    --data_path $DATA_FILE \
    --image_folder playground/data/ \
    --image_aspect_ratio pad \
    --group_by_modality_length True \
    --bf16 True \
    --output_dir ./q-align-koniq \
    --num_train_epochs 2 \
    --per_device_train_batch_size 16 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 800 \
    --save_total_limit 3 \
    --learning_rate 2e-5 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --tune_visual_abstractor True \
    --freeze_vision_model False \
    --dataloader_num_workers 4 \
    --lazy_preprocess True \
    --report_to wandb
