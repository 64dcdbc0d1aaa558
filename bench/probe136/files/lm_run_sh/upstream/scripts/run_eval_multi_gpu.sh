#!/usr/bin/env bash
# Evaluate a HF causal LM with lm-evaluation-harness on one node.
#   bash scripts/run_eval_multi_gpu.sh dp   # data parallel: one replica per GPU via accelerate
#   bash scripts/run_eval_multi_gpu.sh mp   # naive model parallel (parallelize=True) for models > 1 GPU
set -euo pipefail

MODE=${1:-dp}
MODEL=${MODEL:-meta-llama/Llama-2-7b-hf}
TASKS=${TASKS:-hellaswag,arc_easy,arc_challenge,winogrande,mmlu}
OUT=${OUT:-results/$(basename "${MODEL}")}
MAX_MEMORY_PER_GPU=${MAX_MEMORY_PER_GPU:-38GiB}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
# PCIe boxes without NVLink hang in all_gather otherwise
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-1}
export TOKENIZERS_PARALLELISM=false
export HF_DATASETS_TRUST_REMOTE_CODE=1

NUM_GPUS=$(python -c "import torch; print(torch.cuda.device_count())")
echo "Found ${NUM_GPUS} GPUs, mode=${MODE}, model=${MODEL}"
mkdir -p "${OUT}"

if [ "${MODE}" == "dp" ]; then
    accelerate launch --multi_gpu --num_processes "${NUM_GPUS}" -m lm_eval \
        --model hf \
        --model_args "pretrained=${MODEL},dtype=bfloat16" \
        --tasks "${TASKS}" \
        --batch_size auto:4 \
        --log_samples \
        --output_path "${OUT}/dp"
else
    lm_eval --model hf \
        --model_args "pretrained=${MODEL},parallelize=True,max_memory_per_gpu=${MAX_MEMORY_PER_GPU},dtype=bfloat16" \
        --tasks "${TASKS}" \
        --batch_size 8 \
        --device cuda:0 \
        --log_samples \
        --output_path "${OUT}/mp"
fi
