#!/usr/bin/env bash
# Train MonoSDF (MLP or multi-res grid) on the 4 ScanNet scenes used in the paper.
# Usage: bash scripts/train_scannet.sh [grids|mlp] [num_gpus]
set -e

MODE=${1:-grids}
NUM_GPUS=${2:-1}
CONF=confs/scannet_${MODE}.conf

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
export OMP_NUM_THREADS=4

cd "$(dirname "$0")/../code"

# sanity check: print the GPUs we are going to use
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

for SCAN_ID in 1 2 3 4; do
    echo "==> scan ${SCAN_ID} (${MODE}) on ${NUM_GPUS} GPU(s)"
    python -m torch.distributed.launch --nproc_per_node ${NUM_GPUS} --nnodes=1 --node_rank=0 \
        --master_port=$((29500 + SCAN_ID)) \
        training/exp_runner.py --conf ${CONF} --scan_id ${SCAN_ID}
done

# extract meshes with the latest checkpoints (single GPU is enough)
for SCAN_ID in 1 2 3 4; do
    python evaluation/eval.py --conf ${CONF} --scan_id ${SCAN_ID} --resolution 512 \
        --eval_rendering --evals_folder ../evals_${MODE}
done
