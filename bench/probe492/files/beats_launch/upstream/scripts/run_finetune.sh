#!/usr/bin/env bash
# Fine-tune BEATs on a species set with one process per GPU.
# Usage: bash scripts/run_finetune.sh <dataset_dir> [extra args]
set -eo pipefail

DATA_DIR=${1:?"usage: run_finetune.sh <dataset_dir>"}
shift

cd "$(dirname "$0")/.."

# all visible GPUs are used unless NGPUS is set
NGPUS=${NGPUS:-$(nvidia-smi -L | wc -l)}
echo "Launching on ${NGPUS} GPU(s):"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader

export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export PYTHONPATH=$(pwd):$(pwd)/BEATs:${PYTHONPATH}

torchrun --standalone --nproc_per_node="${NGPUS}" scripts/finetune_beats_ddp.py \
    --beats-ckpt checkpoints/BEATs_iter3_plus_AS2M.pt \
    --train-meta "${DATA_DIR}/train.csv" \
    --valid-meta "${DATA_DIR}/valid.csv" \
    --labels "${DATA_DIR}/labels.json" \
    --out-dir "runs/$(basename "${DATA_DIR}")_beats" \
    --batch-size 16 \
    --epochs 30 \
    "$@"
