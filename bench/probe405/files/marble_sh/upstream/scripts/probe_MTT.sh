#!/bin/bash
# Extract MERT features for MagnaTagATune and run the tagging probe.
#
#   bash scripts/probe_MTT.sh MERT-v1-95M 0
#
# Second argument is the GPU to use (extraction and probing share one card).
MODEL=${1:-MERT-v1-95M}
GPU=${2:-0}
CONFIG=configs/mert/${MODEL}/MTT.yaml

export CUDA_VISIBLE_DEVICES=${GPU}
export TOKENIZERS_PARALLELISM=false
export WANDB_MODE=${WANDB_MODE:-online}

echo "[MARBLE] ${MODEL} on MTT, device ${GPU}"

# 1) pre-extract features (skips clips that already have a .npy)
python . extract -c ${CONFIG}

# 2) probe, 3 seeds
for SEED in 1234 2345 3456; do
    python . probe -c ${CONFIG} -o "trainer.seed=${SEED},logger.wandb_run_name=MTT-${MODEL}-s${SEED}"
done
