#!/bin/bash
# Serve UI-TARS with vLLM's OpenAI-compatible server.
#   bash deploy/serve_vllm.sh ByteDance-Seed/UI-TARS-1.5-7B 2
# 7B fits on one 80G card; use TP=2 for 72B on 4x80G with --max-model-len 32768.
set -e

MODEL=${1:-ByteDance-Seed/UI-TARS-1.5-7B}
TP=${2:-1}
PORT=${PORT:-8000}

export CUDA_VISIBLE_DEVICES=${GPUS:-0}
export VLLM_WORKER_MULTIPROC_METHOD=spawn

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv,noheader

python -m vllm.entrypoints.openai.api_server \
    --served-model-name ui-tars \
    --model ${MODEL} \
    --host 0.0.0.0 \
    --port ${PORT} \
    --tensor-parallel-size ${TP} \
    --dtype bfloat16 \
    --max-model-len 32768 \
    --limit-mm-per-prompt image=5 \
    --gpu-memory-utilization 0.9 \
    --trust-remote-code
