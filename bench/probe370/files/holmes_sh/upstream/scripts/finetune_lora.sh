#!/bin/bash

# Instruction tuning of Holmes-VAD (LoRA) on VAD-Instruct50k, 8 x A100-80G
JSON_FOLDER="./data/VAD-Instruct50k/json"
VIDEO_FOLDER="./data/VAD-Instruct50k/videos"
cd /path/to/Holmes-VAD

export WANDB_DISABLED=true
gpu_vis=0,1,2,3,4,5,6,7
MASTER_PORT=29570

HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 deepspeed --include localhost:$gpu_vis --master_port $MASTER_PORT \
    holmesvad/train/train_mem.py \
    --lora_enable True --lora_r 128 --lora_alpha 256 --mm_projector_lr 2e-5 \
    --deepspeed ./scripts/zero2.json \
    --model_name_or_path ./checkpoints/Video-LLaVA-7B \
    --version v1 \
    --data_path ${JSON_FOLDER}/holmes_instruct_train.json \
    --video_folder ${VIDEO_FOLDER} \
    --video_tower ./cache_dir/LanguageBind_Video_merge \
    --mm_projector_type mlp2x_gelu \
    --pretrain_mm_mlp_adapter ./checkpoints/Video-LLaVA-7B/mm_projector.bin \
    --mm_vision_select_layer -2 \
    --mm_use_im_start_end False \
    --mm_use_im_patch_token False \
    --image_aspect_ratio pad \
    --group_by_modality_length True \
    --bf16 True \
    --output_dir ./checkpoints/holmesvad-7b-lora \
    --num_train_epochs 1 \
    --per_device_train_batch_size 16 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 50000 \
    --save_total_limit 1 \
    --learning_rate 2e-4 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 2048 --tokenizer_model_max_length 3072 \
    --gradient_checkpointing True \
    --dataloader_num_workers 4 \
    --lazy_preprocess True \
    --report_to tensorboard \
    --cache_dir "./cache_dir"
