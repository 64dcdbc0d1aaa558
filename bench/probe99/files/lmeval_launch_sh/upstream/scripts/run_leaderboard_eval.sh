#!/usr/bin/env bash
# Run the Open LLM Leaderboard task suite on one 8-GPU node.
#
#   bash scripts/run_leaderboard_eval.sh <hf-model-id> [num_gpus] [mode]
#
# mode = dp   -> data parallel via `accelerate launch` (one model replica per GPU)
# mode = pp   -> one process, layers spread over all GPUs (`parallelize=True`)
# mode = vllm -> vLLM backend with tensor parallelism
set -euo pipefail

MODEL=${1:?"usage: $0 <hf-model-id> [num_gpus] [mode]"}
NUM_GPUS=${2:-8}
MODE=${3:-dp}
OUTPUT_DIR=${OUTPUT_DIR:-./results/leaderboard}
TASKS=${TASKS:-leaderboard_bbh,leaderboard_gpqa,leaderboard_ifeval,leaderboard_math_hard,leaderboard_mmlu_pro,leaderboard_musr}

# pick the first $NUM_GPUS GPUs unless the caller pinned them already
if [[ -z "${CUDA_VISIBLE_DEVICES:-}" ]]; then
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NUM_GPUS - 1)))
fi
echo "Using GPUs: ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

export TOKENIZERS_PARALLELISM=false
export HF_DATASETS_TRUST_REMOTE_CODE=1
# NCCL on these nodes has no InfiniBand; go through the socket transport
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export NCCL_ASYNC_ERROR_HANDLING=1

mkdir -p "${OUTPUT_DIR}"
COMMON_ARGS="--tasks ${TASKS} --batch_size auto --output_path ${OUTPUT_DIR} --log_samples --apply_chat_template --fewshot_as_multiturn"

case "${MODE}" in
  dp)
    accelerate launch --multi_gpu --num_processes "${NUM_GPUS}" --mixed_precision bf16 \
        -m lm_eval --model hf \
        --model_args "pretrained=${MODEL},dtype=bfloat16,attn_implementation=flash_attention_2" \
        ${COMMON_ARGS}
    ;;
  pp)
    python -m lm_eval --model hf \
        --model_args "pretrained=${MODEL},dtype=bfloat16,parallelize=True" \
        --device cuda \
        ${COMMON_ARGS}
    ;;
  vllm)
    python -m lm_eval --model vllm \
        --model_args "pretrained=${MODEL},dtype=bfloat16,tensor_parallel_size=${NUM_GPUS},gpu_memory_utilization=0.85,max_model_len=4096" \
        ${COMMON_ARGS}
    ;;
  *)
    echo "unknown mode: ${MODE}" >&2
    exit 1
    ;;
esac

echo "Done. Results in ${OUTPUT_DIR}"
