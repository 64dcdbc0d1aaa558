#!/usr/bin/env bash
# Serve SWE-Llama behind an OpenAI-compatible endpoint with vLLM and point run_api.py at it:
#
#   bash swebench/inference/scripts/serve_swe_llama.sh          # terminal 1
#   OPENAI_API_BASE=http://localhost:8000/v1 python -m swebench.inference.run_api \
#       --dataset_name_or_path princeton-nlp/SWE-bench_oracle --model_name_or_path swe-llama ...
#
# 13b fits on 2x A100-80GB at 16k context; 7b on a single card.
set -euo pipefail

MODEL=${MODEL:-princeton-nlp/SWE-Llama-13b}
PORT=${PORT:-8000}
MAX_LEN=${MAX_LEN:-16384}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}
TP=${TP:-$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)}

# pre-flight: print what we are about to use
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

export VLLM_ATTENTION_BACKEND=FLASH_ATTN
export NCCL_P2P_DISABLE=0
export NCCL_IGNORE_DISABLED_P2P=1
export VLLM_LOGGING_LEVEL=INFO

python -m vllm.entrypoints.openai.api_server \
    --model "${MODEL}" \
    --served-model-name swe-llama \
    --tensor-parallel-size "${TP}" \
    --gpu-memory-utilization 0.92 \
    --max-model-len "${MAX_LEN}" \
    --dtype bfloat16 \
    --disable-log-requests \
    --port "${PORT}"
