#!/usr/bin/env bash
# Run the retrieval-augmented QA + general LM eval suite for one checkpoint.
#
#   bash scripts/run_eval_suite.sh /ckpts/llama3-8b-rag-sft [hf|vllm]
#
# Results land in results/<model-name>/<backend>/.
set -euo pipefail

MODEL_PATH=${1:?"usage: $0 MODEL_PATH [hf|vllm]"}
BACKEND=${2:-hf}
MODEL_NAME=$(basename "${MODEL_PATH}")
OUT_DIR=results/${MODEL_NAME}/${BACKEND}
mkdir -p "${OUT_DIR}"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "Evaluating ${MODEL_NAME} on ${NUM_GPUS} GPUs with backend=${BACKEND}"

export HF_DATASETS_CACHE=${HF_DATASETS_CACHE:-/data/hf_cache}
export TOKENIZERS_PARALLELISM=false
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN

TASKS_GENERAL="mmlu,arc_challenge,hellaswag,truthfulqa_mc2,winogrande"
TASKS_QA="nq_open,triviaqa"

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "${OUT_DIR}/gpus.csv"

if [[ "${BACKEND}" == "hf" ]]; then
    # data parallel: one full model replica per GPU
    accelerate launch --multi_gpu --num_processes "${NUM_GPUS}" --mixed_precision bf16 \
        -m lm_eval --model hf \
        --model_args "pretrained=${MODEL_PATH},dtype=bfloat16,attn_implementation=flash_attention_2" \
        --tasks "${TASKS_GENERAL}" \
        --batch_size auto:4 \
        --output_path "${OUT_DIR}/general" \
        --log_samples

    # generative QA is slow with HF; keep it on one device
    lm_eval --model hf \
        --model_args "pretrained=${MODEL_PATH},dtype=bfloat16" \
        --tasks "${TASKS_QA}" \
        --device cuda:0 \
        --batch_size 16 \
        --gen_kwargs "max_gen_toks=32" \
        --output_path "${OUT_DIR}/qa"
else
    lm_eval --model vllm \
        --model_args "pretrained=${MODEL_PATH},tensor_parallel_size=${NUM_GPUS},dtype=bfloat16,gpu_memory_utilization=0.85,max_model_len=4096" \
        --tasks "${TASKS_GENERAL},${TASKS_QA}" \
        --batch_size auto \
        --output_path "${OUT_DIR}/all"
fi

python - <<'PY' "${OUT_DIR}"
import glob, json, sys
out = sys.argv[1]
for path in sorted(glob.glob(f"{out}/**/results*.json", recursive=True)):
    res = json.load(open(path))["results"]
    for task, metrics in res.items():
        vals = {k: v for k, v in metrics.items() if isinstance(v, float) and "stderr" not in k}
        print(f"{task:30s} " + "  ".join(f"{k}={v:.4f}" for k, v in vals.items()))
PY

nvidia-smi --query-gpu=index,memory.used --format=csv >> "${OUT_DIR}/gpus.csv"
echo "done: ${OUT_DIR}"
