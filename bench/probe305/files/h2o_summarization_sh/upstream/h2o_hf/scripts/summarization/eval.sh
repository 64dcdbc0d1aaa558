#!/bin/bash
# Usage: bash scripts/summarization/eval.sh xsum 3 h2o 0
#   $1 task (xsum | cnn_dailymail)
#   $2 shots
#   $3 method (full | h2o)
#   $4 GPU id

task=$1
shots=$2
method=$3
GPU=$4
HH_SIZE=0.1
RECENT_SIZE=0.1

model_arch=llama
model=huggyllama/llama-7b

mkdir -p summary_results

if [[ ${method} == 'h2o' ]]; then
    CUDA_VISIBLE_DEVICES=${GPU} python -u run_summarization.py \
        --input_path data/summarization_data/${task}_${shots}shot.jsonl \
        --output_path summary_results/${task}_${shots}shot_h2o_hh${HH_SIZE}_local${RECENT_SIZE}.jsonl \
        --model_name ${model} \
        --model_arch ${model_arch} \
        --hh_size 200 \
        --recent_size 200 \
        --cache_dir ../../llm_weights \
        --enable_h2o_cache
elif [[ ${method} == 'full' ]]; then
    CUDA_VISIBLE_DEVICES=$GPU python -u run_summarization.py \
        --input_path data/summarization_data/${task}_${shots}shot.jsonl \
        --output_path summary_results/${task}_${shots}shot_full.jsonl \
        --model_name ${model} \
        --model_arch ${model_arch} \
        --cache_dir ../../llm_weights
else
    echo 'unknown argment for method'
    exit 1
fi

# ROUGE on the generated summaries is CPU only
python -u eval_summarization.py \
    --result_path summary_results/${task}_${shots}shot_${method}*.jsonl
