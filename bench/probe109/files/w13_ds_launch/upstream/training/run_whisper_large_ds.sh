#!/usr/bin/env bash
# Fine-tune whisper-large-v3 on Common Voice 16 (hi) with DeepSpeed ZeRO-2 on one 8-GPU node.
#   bash training/run_whisper_large_ds.sh [NUM_GPUS]
set -euo pipefail

NUM_GPUS=${1:-8}
MODEL=openai/whisper-large-v3
OUT=./whisper-large-v3-hi
export WANDB_PROJECT=whisper-ft

# --- NCCL / CUDA runtime knobs -----------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_P2P_LEVEL=NVL
export NCCL_IB_DISABLE=1
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

deepspeed --num_gpus "${NUM_GPUS}" training/run_speech_recognition_seq2seq.py \
    --deepspeed training/ds_config_zero2.json \
    --model_name_or_path "${MODEL}" \
    --dataset_name mozilla-foundation/common_voice_16_1 \
    --dataset_config_name hi \
    --language hindi \
    --task transcribe \
    --train_split_name "train+validation" \
    --eval_split_name test \
    --max_steps 5000 \
    --output_dir "${OUT}" \
    --per_device_train_batch_size 16 \
    --per_device_eval_batch_size 16 \
    --gradient_accumulation_steps 1 \
    --logging_steps 25 \
    --learning_rate 1e-5 \
    --warmup_steps 500 \
    --evaluation_strategy steps \
    --eval_steps 1000 \
    --save_strategy steps \
    --save_steps 1000 \
    --generation_max_length 225 \
    --preprocessing_num_workers 16 \
    --max_duration_in_seconds 30 \
    --text_column_name sentence \
    --freeze_feature_encoder False \
    --gradient_checkpointing \
    --fp16 \
    --tf32 True \
    --ddp_backend nccl \
    --dataloader_num_workers 8 \
    --dataloader_pin_memory True \
    --attn_implementation sdpa \
    --overwrite_output_dir \
    --do_train \
    --do_eval \
    --predict_with_generate \
    --report_to wandb tensorboard
