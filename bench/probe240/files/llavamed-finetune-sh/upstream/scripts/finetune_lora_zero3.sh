#!/bin/bash
# Stage 2 of LLaVA-Med v1.5: end-to-end instruction tuning with LoRA on top of the
# stage-1 projector. ZeRO-3 keeps the 7B model within 4 x A100 40GB.

export NCCL_P2P_LEVEL=NVL
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export WANDB_PROJECT=llava-med

deepspeed --include localhost:0,1,2,3 llava/train/train_mem.py \
    --lora_enable True --lora_r 128 --lora_alpha 256 --mm_projector_lr 2e-5 \
    --deepspeed ./scripts/zero3.json \
    --model_name_or_path mistralai/Mistral-7B-Instruct-v0.2 \
    --version mistral_instruct \
    --data_path ./data/instruct/llava_med_instruct_60k_inline_mention.json \
    --image_folder ./data/pmc_images \
    --vision_tower openai/clip-vit-large-patch14-336 \
    --pretrain_mm_mlp_adapter ./checkpoints/llava-med-mistral-pretrain/mm_projector.bin \
    --mm_projector_type mlp2x_gelu \
    --mm_vision_select_layer -2 \
    --mm_use_im_start_end False \
    --mm_use_im_patch_token False \
    --image_aspect_ratio pad \
    --group_by_modality_length True \
    --bf16 True \
    --output_dir ./checkpoints/llava-med-v1.5-mistral-7b-lora \
    --num_train_epochs 3 \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 2 \
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
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --dataloader_num_workers 4 \
    --lazy_preprocess True \
    --report_to wandb
