#!/bin/bash
# Main DetectGPT results (Table 1): 5 source models x 3 datasets, T5-3B mask filling.
# Each run needs a single 48GB GPU; gpt-neox-20b needs --int8 for the mask model to fit alongside it.

set -e

DATASETS="xsum squad writing"
MODELS="gpt2-xl EleutherAI/gpt-neo-2.7B facebook/opt-2.7b EleutherAI/gpt-j-6B"

for dataset in $DATASETS; do
    key=document
    if [ "$dataset" = "squad" ]; then
        key=context
    fi
    for model in $MODELS; do
        python run.py \
            --output_name main \
            --base_model_name "$model" \
            --mask_filling_model_name t5-3b \
            --n_perturbation_list 1,10,100 \
            --n_samples 500 \
            --pct_words_masked 0.3 \
            --span_length 2 \
            --dataset "$dataset" \
            --dataset_key "$key"
    done
done

# the big one
for dataset in $DATASETS; do
    key=document
    if [ "$dataset" = "squad" ]; then
        key=context
    fi
    python run.py \
        --output_name main \
        --base_model_name EleutherAI/gpt-neox-20b \
        --mask_filling_model_name t5-3b \
        --n_perturbation_list 1,10,100 \
        --n_samples 500 \
        --pct_words_masked 0.3 \
        --span_length 2 \
        --dataset "$dataset" \
        --dataset_key "$key" \
        --int8
done
