#!/bin/bash
# LoRA SFT of CodeLlama-7B on DAIL-SQL prompts, 4 x A100-40G.
set -x

BASE_MODEL=${BASE_MODEL:-codellama/CodeLlama-7b-hf}
DATA=dataset/process/SPIDER-TRAIN_SQL_9-SHOT_EUCDISQUESTIONMASK_QA-EXAMPLE_CTX-200_ANS-2048/questions.json
OUT=checkpoints/codellama-7b-lora-dail

nvidia-smi

export WANDB_MODE=offline
export OMP_NUM_THREADS=8
export NCCL_P2P_DISABLE=1

CUDA_VISIBLE_DEVICES=4,5,6,7 torchrun --nproc_per_node=4 --master_port=29501 finetune/sft_lora.py \
    --base_model "$BASE_MODEL" \
    --data_path "$DATA" \
    --output_dir "$OUT" \
    --batch_size 128 \
    --micro_batch_size 4 \
    --num_epochs 3 \
    --learning_rate 3e-4 \
    --cutoff_len 2048 \
    --val_set_size 500 \
    --lora_r 16 \
    --lora_alpha 32 \
    --lora_target_modules '[q_proj,k_proj,v_proj,o_proj]' \
    --group_by_length
