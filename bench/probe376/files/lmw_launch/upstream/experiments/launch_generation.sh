#!/bin/bash
# Sweep over (gamma, delta) for the reliability experiments.
# One generation job per GPU, GPUs are handed out round-robin from GPU_LIST.
#
# usage: bash experiments/launch_generation.sh [model_name] [output_root]

set -euo pipefail

MODEL_NAME=${1:-"facebook/opt-1.3b"}
OUTPUT_ROOT=${2:-"./output/sweep_$(date +%Y%m%d)"}
GPU_LIST=(0 1 2 3 4 5 6 7)
NUM_GPUS=${#GPU_LIST[@]}

GAMMAS=(0.1 0.25 0.5)
DELTAS=(1.0 2.0 5.0)
SEEDING_SCHEME="selfhash"

export HF_HOME=${HF_HOME:-"$HOME/.cache/huggingface"}
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT="lm-watermarking"

mkdir -p "${OUTPUT_ROOT}/logs"

echo "Visible devices on $(hostname):"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

job_idx=0
for gamma in "${GAMMAS[@]}"; do
    for delta in "${DELTAS[@]}"; do
        gpu=${GPU_LIST[$((job_idx % NUM_GPUS))]}
        run_name="gen_${SEEDING_SCHEME}_g${gamma}_d${delta}"
        echo "launching ${run_name} on gpu ${gpu}"

        CUDA_VISIBLE_DEVICES=${gpu} nohup python experiments/generation_pipeline.py \
            --model_name_or_path="${MODEL_NAME}" \
            --dataset_name=c4 \
            --dataset_config_name=realnewslike \
            --max_new_tokens=200 \
            --min_prompt_tokens=50 \
            --min_generations=500 \
            --input_truncation_strategy=completion_length \
            --input_filtering_strategy=prompt_and_completion_length \
            --output_filtering_strategy=max_new_tokens \
            --seeding_scheme="${SEEDING_SCHEME}" \
            --gamma="${gamma}" \
            --delta="${delta}" \
            --generation_batch_size=8 \
            --load_fp16=True \
            --run_name="${run_name}" \
            --wandb=True \
            --output_dir="${OUTPUT_ROOT}/${run_name}" \
            > "${OUTPUT_ROOT}/logs/${run_name}.log" 2>&1 &

        job_idx=$((job_idx + 1))
        # stagger start-up so the checkpoint download is not hammered 9x in parallel
        if [ $((job_idx % NUM_GPUS)) -eq 0 ]; then
            wait
        else
            sleep 30
        fi
    done
done

wait
echo "all generation jobs finished, outputs in ${OUTPUT_ROOT}"
