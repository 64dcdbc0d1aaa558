#!/usr/bin/env bash
# Generate MT-bench answers for a list of local checkpoints on one 8-GPU node,
# judge them with GPT-4 and print the leaderboard.
#
#   MODEL_ROOT=/mnt/ckpt OPENAI_API_KEY=... bash scripts/run_mt_bench_local.sh
#
# Each checkpoint is loaded NUM_GPUS_PER_MODEL times in parallel through Ray,
# so a 7B model on 8 x A100-80G runs 8 replicas at once.
set -euo pipefail

cd "$(dirname "$0")/.."

MODEL_ROOT=${MODEL_ROOT:-/mnt/models}
BENCH=${BENCH:-mt_bench}
JUDGE=${JUDGE:-gpt-4}
NUM_GPUS_TOTAL=${NUM_GPUS_TOTAL:-$(nvidia-smi --list-gpus | wc -l)}
NUM_GPUS_PER_MODEL=${NUM_GPUS_PER_MODEL:-1}
DTYPE=${DTYPE:-bfloat16}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export TOKENIZERS_PARALLELISM=false
export HF_HUB_OFFLINE=1

MODELS=(
  vicuna-7b-v1.5
  vicuna-13b-v1.5
  Llama-2-7b-chat-hf
  Qwen1.5-7B-Chat
)

if [[ -z "${OPENAI_API_KEY:-}" ]]; then
  echo "OPENAI_API_KEY is not set; answers will be generated but not judged" >&2
  SKIP_JUDGE=1
else
  SKIP_JUDGE=0
fi

echo "Using ${NUM_GPUS_TOTAL} GPUs (${NUM_GPUS_PER_MODEL} per replica)"

ray start --head --num-gpus="${NUM_GPUS_TOTAL}" --disable-usage-stats
trap 'ray stop --force' EXIT

for m in "${MODELS[@]}"; do
  ans="data/${BENCH}/model_answer/${m}.jsonl"
  if [[ -s "${ans}" ]]; then
    echo "skip ${m}: ${ans} exists"
    continue
  fi
  python3 gen_model_answer.py \
    --model-path "${MODEL_ROOT}/${m}" \
    --model-id "${m}" \
    --bench-name "${BENCH}" \
    --num-gpus-per-model "${NUM_GPUS_PER_MODEL}" \
    --num-gpus-total "${NUM_GPUS_TOTAL}" \
    --dtype "${DTYPE}"
done

# how much memory is still held after the run (leaked Ray workers show up here)
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv

if [[ "${SKIP_JUDGE}" == "1" ]]; then
  exit 0
fi

python3 gen_judgment.py \
  --bench-name "${BENCH}" \
  --judge-model "${JUDGE}" \
  --model-list "${MODELS[@]}" \
  --parallel 4

python3 show_result.py --bench-name "${BENCH}" --judge-model "${JUDGE}"
