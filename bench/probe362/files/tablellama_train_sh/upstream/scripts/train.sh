#!/bin/bash
# Fine-tune TableLlama (LongLoRA Llama-2-7B, 8K context) on TableInstruct with 8 x A100 80GB.

export NCCL_P2P_LEVEL=NVL
export WANDB_PROJECT=tablellama

torchrun --nproc_per_node=8 --master_port=29500 supervised_fine-tune.py \
    --model_name_or_path Yukang/Llama-2-7b-longlora-8k-ft \
    --bf16 True \
    --output_dir ckpts/tablellama_7b_8k \
    --model_max_length 8192 \
    --use_flash_attn True \
    --data_path data/tableinstruct_train.json \
    --low_rank_training False \
    --num_train_epochs 2 \
    --per_device_train_batch_size 3 \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 2000 \
    --save_total_limit 2 \
    --learning_rate 2e-5 \
    --weight_decay 0.0 \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "constant_with_warmup" \
    --logging_steps 1 \
    --deepspeed "ds_configs/stage2.json" \
    --tf32 True \
    --run_name tablellama_7b_8k
