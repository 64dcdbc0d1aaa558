#!/bin/bash
# Launch wandb agents for the pyKT hyper-parameter search, N agents per GPU.
#
#   bash start_sweep_gpus.sh <sweep_log> <agents_per_gpu> [gpu_list]
#
# sweep_log is the output of `sh all_start.sh > log.all 2>&1` (one "wandb agent ..." line per sweep).
# gpu_list defaults to every GPU nvidia-smi reports. Agents are pinned with CUDA_VISIBLE_DEVICES so that
# each process only ever sees one card (pyKT models pick "cuda" = the first visible device).

set -euo pipefail

SWEEP_LOG=${1:-log.all}
AGENTS_PER_GPU=${2:-2}
GPU_LIST=${3:-}

if [ -z "${WANDB_API_KEY:-}" ]; then
    WANDB_API_KEY=$(python -c "import json;print(json.load(open('../configs/wandb.json'))['api_key'])")
    export WANDB_API_KEY
fi

# conda env with the CUDA build of torch
source ~/anaconda3/etc/profile.d/conda.sh
conda activate pykt

if [ -z "$GPU_LIST" ]; then
    GPU_LIST=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
fi
IFS=',' read -r -a GPUS <<< "$GPU_LIST"
echo "using GPUs: ${GPUS[*]}"

# skip GPUs that are already busy (more than 2 GB in use)
FREE_GPUS=()
for g in "${GPUS[@]}"; do
    used=$(nvidia-smi -i "$g" --query-gpu=memory.used --format=csv,noheader,nounits | tr -d ' ')
    if [ "$used" -lt 2048 ]; then
        FREE_GPUS+=("$g")
    else
        echo "GPU $g busy (${used} MiB used), skipping"
    fi
done
if [ ${#FREE_GPUS[@]} -eq 0 ]; then
    echo "no free GPU" >&2
    exit 1
fi

mkdir -p logs
AGENTS=$(grep -o "wandb agent [^ ]*" "$SWEEP_LOG" | awk '{print $3}')

k=0
for agent in $AGENTS; do
    for ((i = 0; i < AGENTS_PER_GPU; i++)); do
        gpu=${FREE_GPUS[$((k % ${#FREE_GPUS[@]}))]}
        echo "starting agent $agent on GPU $gpu"
        CUDA_VISIBLE_DEVICES=$gpu nohup wandb agent "$agent" > "logs/agent_${k}.log" 2>&1 &
        k=$((k + 1))
        sleep 2
    done
done

echo "started $k agents"
wait
