#!/bin/bash
# MT-Bench end to end: generate answers on local GPUs, then judge with GPT-4.
#
#   MODEL_PATH=/data/ckpt/vicuna-13b-v1.5 MODEL_ID=vicuna-13b-v1.5 bash scripts/run_mt_bench.sh
#
# 13B fp16 fits on one 40GB card; 33B/70B need --num-gpus-per-model 2/4.
set -e

MODEL_PATH=${MODEL_PATH:?set MODEL_PATH}
MODEL_ID=${MODEL_ID:?set MODEL_ID}
NUM_GPUS_PER_MODEL=${NUM_GPUS_PER_MODEL:-1}
GPU_IDS=${GPU_IDS:-0,1,2,3,4,5,6,7}
JUDGE_MODEL=${JUDGE_MODEL:-gpt-4}
PARALLEL=${PARALLEL:-4}

cd "$(dirname "$0")/../fastchat/llm_judge"

NUM_GPUS_TOTAL=$(echo "${GPU_IDS}" | tr ',' '\n' | wc -l)
echo "[mt-bench] ${MODEL_ID}: ${NUM_GPUS_TOTAL} GPUs, ${NUM_GPUS_PER_MODEL} per replica"

# bail out early if the cards are busy (another eval job still holding memory)
BUSY=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i "${GPU_IDS}" | awk '$1 > 2000' | wc -l)
if [ "${BUSY}" -gt 0 ]; then
    echo "[mt-bench] ${BUSY} GPU(s) already in use, aborting" >&2
    exit 1
fi

# ray picks up the visible devices from the environment
export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export RAY_DEDUP_LOGS=0

# 1) answers
python gen_model_answer.py \
    --model-path "${MODEL_PATH}" \
    --model-id "${MODEL_ID}" \
    --bench-name mt_bench \
    --num-gpus-per-model "${NUM_GPUS_PER_MODEL}" \
    --num-gpus-total "${NUM_GPUS_TOTAL}" \
    --dtype bfloat16

# 2) judgments (API only, no GPU needed)
unset CUDA_VISIBLE_DEVICES
python gen_judgment.py \
    --model-list "${MODEL_ID}" \
    --judge-model "${JUDGE_MODEL}" \
    --parallel "${PARALLEL}" \
    --mode single

# 3) scores
python show_result.py --model-list "${MODEL_ID}" --judge-model "${JUDGE_MODEL}"
