#!/bin/bash
# Evaluate every checkpoint of a VLN-CE run in parallel, one process per GPU.
#
# usage: bash scripts/eval_ckpts_multi_gpu.sh <exp_config.yaml> <ckpt_dir> [split]
#
# Each worker gets its own GPU through CUDA_VISIBLE_DEVICES, so inside the
# worker both the torch device and the habitat-sim renderer are "GPU 0".

set -e

EXP_CONFIG=${1:-vlnce_baselines/config/r2r_baselines/cma_pm_da_aug_tune.yaml}
CKPT_DIR=${2:-data/checkpoints/cma_pm_da_aug_tune}
SPLIT=${3:-val_unseen}

export GLOG_minloglevel=2
export MAGNUM_LOG=quiet
export HABITAT_SIM_LOG=quiet

# make sure the conda env that has habitat-sim 0.1.7 (headless) is active
source ~/miniconda3/etc/profile.d/conda.sh
conda activate vlnce

NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "found ${NUM_GPUS} GPUs"

CKPTS=($(ls ${CKPT_DIR}/ckpt.*.pth | sort -t. -k2 -n))
echo "evaluating ${#CKPTS[@]} checkpoints from ${CKPT_DIR} on ${SPLIT}"

mkdir -p logs/eval
i=0
for ckpt in "${CKPTS[@]}"; do
    gpu=$((i % NUM_GPUS))
    name=$(basename ${ckpt} .pth)
    echo "[gpu ${gpu}] ${ckpt}"
    CUDA_VISIBLE_DEVICES=${gpu} python run.py \
        --exp-config ${EXP_CONFIG} \
        --run-type eval \
        EVAL_CKPT_PATH_DIR ${ckpt} \
        EVAL.SPLIT ${SPLIT} \
        TORCH_GPU_ID 0 \
        SIMULATOR_GPU_IDS "[0]" \
        NUM_ENVIRONMENTS 6 \
        RESULTS_DIR ${CKPT_DIR}/evals \
        > logs/eval/${name}_${SPLIT}.log 2>&1 &
    i=$((i + 1))
    # keep at most one job per GPU
    if (( i % NUM_GPUS == 0 )); then
        wait
    fi
done
wait

python scripts/summarize_evals.py --results-dir ${CKPT_DIR}/evals --split ${SPLIT}
