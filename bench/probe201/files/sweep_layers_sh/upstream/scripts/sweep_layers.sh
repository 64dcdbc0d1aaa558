#!/usr/bin/env bash
# Train one residual-stream SAE per layer of gemma-2-2b, one layer per GPU.
# Usage: bash scripts/sweep_layers.sh [expansion_factor] [l1_coefficient]
#
# On our 8xA100 node this runs layers 0-7, then 8-15, ... (waits between waves).
# Set DISTRIBUTED=1 to instead train all layers in a single torchrun job with the
# sparsify trainer (--distribute_modules).

EXPANSION=${1:-16}
L1=${2:-5}
N_LAYERS=26
LOG_DIR=logs/sweep_$(date +%Y%m%d_%H%M%S)
mkdir -p "$LOG_DIR"

source .venv/bin/activate
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=gemma2-2b-res-saes

NUM_GPUS=$(python -c "import torch; print(torch.cuda.device_count())")
echo "Found $NUM_GPUS GPUs"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

if [[ "${DISTRIBUTED:-0}" == "1" ]]; then
    export NCCL_DEBUG=WARN
    export NCCL_P2P_LEVEL=NVL
    export CUDA_DEVICE_MAX_CONNECTIONS=1
    torchrun --nproc_per_node "$NUM_GPUS" -m sparsify google/gemma-2-2b \
        --distribute_modules --batch_size 8 --expansion_factor "$EXPANSION" \
        --run_name "gemma2-2b-all-layers-x${EXPANSION}" 2>&1 | tee "$LOG_DIR/torchrun.log"
    exit $?
fi

for ((layer = 0; layer < N_LAYERS; layer++)); do
    gpu=$((layer % NUM_GPUS))
    echo "layer $layer -> GPU $gpu"
    CUDA_VISIBLE_DEVICES=$gpu python scripts/train_sae.py \
        --model gemma-2-2b \
        --hook "blocks.${layer}.hook_resid_post" \
        --layer "$layer" \
        --expansion_factor "$EXPANSION" \
        --l1_coefficient "$L1" \
        --device cuda \
        > "$LOG_DIR/layer_${layer}.log" 2>&1 &

    # wait for the current wave to finish before launching the next one
    if (( (layer + 1) % NUM_GPUS == 0 )); then
        wait
    fi
done
wait
echo "all layers done; logs in $LOG_DIR"
