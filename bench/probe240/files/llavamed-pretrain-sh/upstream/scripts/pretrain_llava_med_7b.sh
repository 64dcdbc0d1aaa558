#!/bin/bash
# Stage 1 of LLaVA-Med: biomedical concept feature alignment.
# Only the projection layer is trained; the LLM and CLIP vision tower stay frozen.
# Tested on 1 node x 8 A100 (40GB). Takes ~7 hours on PMC-15M-align-600K.

MODEL_VERSION=vicuna-7b-v1.5
DATA_ROOT=./data
OUTPUT_DIR=./checkpoints/llava-med-${MODEL_VERSION}-pretrain

torchrun --nnodes=1 --nproc_per_node=8 --master_port=25001 \
    llava/train/train_mem.py \
    --model_name_or_path ./checkpoints/${MODEL_VERSION} \
    --data_path ${DATA_ROOT}/alignment/llava_med_alignment_500k.json \
    --image_folder ${DATA_ROOT}/pmc_images \
    --vision_tower openai/clip-vit-large-patch14 \
    --tune_mm_mlp_adapter True \
    --mm_vision_select_layer -2 \
    --mm_use_im_start_end \
    --bf16 True \
    --output_dir ${OUTPUT_DIR} \
    --num_train_epochs 1 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 8 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 2400 \
    --save_total_limit 1 \
    --learning_rate 2e-3 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --lazy_preprocess True \
    --fsdp "full_shard auto_wrap" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \
    --report_to wandb
