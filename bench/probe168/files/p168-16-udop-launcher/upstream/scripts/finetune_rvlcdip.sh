#!/usr/bin/env bash
# Fine-tune UDOP-large (224) on RVL-CDIP.
# Expects the OCR'd RVL-CDIP layout under $DATA_DIR (images/, labels/, ocr/).
# Usage: bash scripts/finetune_rvlcdip.sh /data/rvl-cdip ./checkpoints/udop-unimodel-large-224

DATA_DIR=${1:-/data/rvl-cdip}
MODEL_PATH=${2:-./checkpoints/udop-unimodel-large-224}
OUTPUT_DIR=${OUTPUT_DIR:-./output/udop_rvlcdip_$(date +%m%d_%H%M)}

# one process per visible GPU
NUM_GPUS=$(nvidia-smi -L | wc -l)
echo "Launching on ${NUM_GPUS} GPUs"

export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_P2P_LEVEL=NVL
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=udop-rvlcdip

torchrun --nproc_per_node=${NUM_GPUS} --master_port=${MASTER_PORT:-29501} finetune_rvlcdip.py \
    --model_name_or_path ${MODEL_PATH} \
    --data_dir ${DATA_DIR} \
    --output_dir ${OUTPUT_DIR} \
    --do_train --do_eval \
    --max_seq_length 512 --max_seq_length_decoder 16 --image_size 224 \
    --per_device_train_batch_size 4 --per_device_eval_batch_size 8 \
    --gradient_accumulation_steps 2 \
    --learning_rate 5e-5 --warmup_ratio 0.05 --weight_decay 0.01 \
    --num_train_epochs 3 --lr_scheduler_type cosine \
    --evaluation_strategy steps --eval_steps 5000 --save_steps 5000 --save_total_limit 3 \
    --predict_with_generate --generation_max_length 16 \
    --dataloader_num_workers 8 \
    --bf16 \
    --logging_steps 50 --report_to wandb
