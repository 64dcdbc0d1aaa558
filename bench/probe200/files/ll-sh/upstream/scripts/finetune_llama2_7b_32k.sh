#!/usr/bin/env bash
# LongLoRA: Llama-2-7B -> 32K context, LoRA+ (embed,norm trainable), one node with 4x A100-80GB.
set -euo pipefail

MODEL=${MODEL:-meta-llama/Llama-2-7b-hf}
OUT=${OUT:-./checkpoints/llama2-7b-longlora-32k}
CACHE=${CACHE:-./cache}
NPROC=4

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=8

mkdir -p "${OUT}"

torchrun --nproc_per_node=${NPROC} --master_port=29501 fine-tune.py \
    --model_name_or_path "${MODEL}" \
    --bf16 True \
    --output_dir "${OUT}" \
    --cache_dir "${CACHE}" \
    --model_max_length 32768 \
    --use_flash_attn True \
    --low_rank_training True \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps 16 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 1000 \
    --save_total_limit 2 \
    --learning_rate 2e-5 \
    --weight_decay 0.0 \
    --warmup_steps 20 \
    --lr_scheduler_type "constant_with_warmup" \
    --logging_steps 1 \
    --deepspeed "ds_configs/stage2.json" \
    --tf32 True \
    --max_steps 1000

# merge LoRA + trainable embed/norm into a full checkpoint
python3 get_trainable_weights.py --checkpoint_path "${OUT}/checkpoint-1000" --trainable_params "embed,norm"
python3 merge_lora_weights_and_save_hf_model.py \
    --base_model "${MODEL}" \
    --peft_model "${OUT}/checkpoint-1000" \
    --context_size 32768 \
    --save_path "${OUT}/merged"

# perplexity on PG19 validation at 32K
CUDA_VISIBLE_DEVICES=0 python3 eval.py --seq_len 32768 --context_size 32768 --batch_size 1 \
    --base_model "${OUT}/merged" --data_path pg19/validation.bin
