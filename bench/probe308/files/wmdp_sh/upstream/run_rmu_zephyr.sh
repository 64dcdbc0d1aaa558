#!/bin/bash
# RMU on zephyr-7b-beta (bio + cyber forget corpora), then WMDP / MMLU with lm-evaluation-harness.
# Frozen and updated copies are spread over two 80GB GPUs by device_map="auto".
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1
export TOKENIZERS_PARALLELISM=false
OUT=models/zephyr_rmu

python3 -m rmu.unlearn \
    --model_name_or_path HuggingFaceH4/zephyr-7b-beta \
    --max_num_batches 150 \
    --batch_size 4 \
    --retain_corpora wikitext,wikitext \
    --forget_corpora bio-forget-corpus,cyber-forget-corpus \
    --steering_coeffs 6.5,6.5 \
    --alpha 1200,1200 \
    --layer_id 7 --layer_ids 5,6,7 \
    --lr 5e-5 \
    --seed 42 \
    --output_dir ${OUT}

# knowledge (WMDP) and general capability (MMLU); one GPU is enough for a 7B model in bf16
lm-eval --model hf \
    --model_args pretrained=${OUT},dtype=bfloat16 \
    --tasks wmdp_bio,wmdp_cyber,mmlu \
    --batch_size 16 \
    --device cuda:0 \
    --output_path results/${OUT##*/}
