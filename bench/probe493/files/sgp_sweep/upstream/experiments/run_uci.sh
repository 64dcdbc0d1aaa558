#!/usr/bin/env bash
# Reproduce the UCI table of the Simplex-GP paper.
#
#   bash experiments/run_uci.sh <gpu-id> [dataset ...]
#
# One job per dataset, all on the same GPU. Results go to wandb (offline by default).
set -euo pipefail

GPU=${1:-0}
shift || true
DATASETS=${@:-"elevators houseelectric precipitation protein 3droad keggdirected"}

export CUDA_VISIBLE_DEVICES=${GPU}
export WANDB_MODE=${WANDB_MODE:-offline}
export PYTHONPATH=$(pwd):${PYTHONPATH:-}

# Build the CUDA extension once (no-op if already built)
python setup.py build_ext --inplace > /dev/null

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

for ds in ${DATASETS}; do
  echo ">>> ${ds} on GPU ${GPU}"
  python experiments/train_simplexgp.py \
    --dataset=${ds} \
    --data-dir=${UCI_DATA_DIR:-data/uci} \
    --device=0 \
    --epochs=100 \
    --lr=0.1 \
    --order=1 \
    --pre-size=100 \
    --lanc-iter=100 \
    --seed=${SEED:-1337} \
    --log-int=1
done
