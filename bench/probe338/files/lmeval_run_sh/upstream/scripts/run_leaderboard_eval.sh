#!/bin/bash
# Reproduce Open LLM Leaderboard (v2) style numbers for a HF checkpoint on one
# 8-GPU node, then run the generative tasks again through vLLM.
#
#   bash scripts/run_leaderboard_eval.sh meta-llama/Meta-Llama-3-8B-Instruct [out_dir]
set -e

MODEL=${1:?usage: $0 <hf_model_or_path> [output_dir]}
OUT=${2:-results/$(basename "$MODEL")}
mkdir -p "$OUT"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)

export NCCL_ASYNC_ERROR_HANDLING=1
export TOKENIZERS_PARALLELISM=false
export HF_ALLOW_CODE_EVAL=1
export HF_DATASETS_TRUST_REMOTE_CODE=1

echo "[$(date)] evaluating $MODEL on $NUM_GPUS GPUs -> $OUT"

# 0) quick smoke test on a single GPU so that a broken checkpoint fails fast
lm_eval --model hf \
    --model_args "pretrained=${MODEL},dtype=bfloat16" \
    --tasks hellaswag \
    --limit 50 \
    --batch_size 8 \
    --device cuda:0 \
    --output_path "${OUT}/smoke"

# 1) log-likelihood tasks: data parallel, one model replica per GPU
accelerate launch --multi_gpu --num_processes "${NUM_GPUS}" -m lm_eval \
    --model hf \
    --model_args "pretrained=${MODEL},dtype=bfloat16,trust_remote_code=True" \
    --tasks leaderboard_mmlu_pro,leaderboard_bbh,leaderboard_gpqa,leaderboard_musr \
    --batch_size auto:4 \
    --apply_chat_template \
    --fewshot_as_multiturn \
    --log_samples \
    --output_path "${OUT}/loglik"

# 2) generative tasks are much faster with vLLM (TP=2, DP=NUM_GPUS/2)
lm_eval --model vllm \
    --model_args "pretrained=${MODEL},tensor_parallel_size=2,data_parallel_size=$((NUM_GPUS / 2)),dtype=bfloat16,gpu_memory_utilization=0.85,max_model_len=4096" \
    --tasks leaderboard_ifeval,leaderboard_math_hard \
    --batch_size auto \
    --device cuda \
    --apply_chat_template \
    --log_samples \
    --output_path "${OUT}/gen"

echo "[$(date)] done"
nvidia-smi
