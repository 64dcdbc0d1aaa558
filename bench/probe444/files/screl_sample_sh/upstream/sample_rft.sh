#!/bin/bash
# Rejection-sampling fine-tuning (RFT) on GSM8K
#   1. sample k=100 reasoning paths per training question from the SFT model (8 GPUs, 25 rounds x 4 seq)
#   2. keep correct + distinct (by equation list) paths
#   3. fine-tune the base model on the augmented set with DeepSpeed ZeRO-3
set -e

SFT_MODEL=${SFT_MODEL:-"checkpoints/llama-7b-sft"}
BASE_MODEL=${BASE_MODEL:-"decapoda-research/llama-7b-hf"}
OUT=${OUT:-"rft_samples/llama-7b"}
ROUNDS=${ROUNDS:-25}
mkdir -p ${OUT}

for ((r = 0; r < ROUNDS; r++)); do
    for i in 0 1 2 3 4 5 6 7; do
        CUDA_VISIBLE_DEVICES=${i} python single_inference.py \
            --base_model ${SFT_MODEL} \
            --data_path data/train_use.jsonl \
            --out_path ${OUT}/round${r}_gpu${i}.jsonl \
            --seed $((r * 8 + i + 100)) \
            --temp 0.7 \
            --num_return_sequences 4 \
            --batch_size 16 &
    done
    wait
done

python group_rft_data.py --inputs "${OUT}/round*_gpu*.jsonl" --out data/rft_llama7b_k100.jsonl --include_gold

deepspeed --num_gpus 8 --master_port 29500 train.py \
    --model_name_or_path ${BASE_MODEL} \
    --data_path data/rft_llama7b_k100.jsonl \
    --bf16 True \
    --output_dir checkpoints/llama-7b-rft-k100 \
    --num_train_epochs 3 \
    --per_device_train_batch_size 4 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 4 \
    --evaluation_strategy "no" \
    --save_strategy "epoch" \
    --save_total_limit 1 \
    --learning_rate 2e-5 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 10 \
    --deepspeed ds_config.json \
    --tf32 True \
    --gradient_checkpointing True
