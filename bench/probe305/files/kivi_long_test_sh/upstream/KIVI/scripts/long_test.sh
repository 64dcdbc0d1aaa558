#!/usr/bin/env bash
# LongBench evaluation for KIVI.
# bash scripts/long_test.sh {GPU_ID} {K_BITS} {V_BITS} {GROUP_LENGTH} {RESIDUAL_LENGTH} {MODEL_NAME}
# e.g. bash scripts/long_test.sh 0 2 2 32 128 Llama-2-7b-chat-hf
set -e

gpuid=$1
k_bits=$2
v_bits=$3
group_size=$4
residual_length=$5
model=$6
e=0

export CUDA_LAUNCH_BLOCKING=0
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TOKENIZERS_PARALLELISM=false

# the quant kernels are JIT compiled by triton on first use
export TRITON_CACHE_DIR=${HOME}/.triton/kivi_cache

CUDA_VISIBLE_DEVICES=$gpuid python pred_long_bench.py \
    --model_name_or_path meta-llama/${model} \
    --cache_dir ./cached_models \
    --k_bits ${k_bits} \
    --v_bits ${v_bits} \
    --group_size ${group_size} \
    --residual_length ${residual_length} \
    --e ${e}

python eval_long_bench.py --model ${model}_${k_bits}bits_group${group_size}_residual${residual_length}
