#!/usr/bin/env bash
# Fine-tune VGGT on Co3D with 4 GPUs of an 8-GPU node (the other half is used by the eval jobs).
# Usage: bash train.sh [config_name]
set -e

CONFIG=${1:-default}
NPROC=4

export CUDA_VISIBLE_DEVICES=4,5,6,7
export OMP_NUM_THREADS=8

cd "$(dirname "$0")"
mkdir -p logs

echo "Launching ${NPROC} ranks with config ${CONFIG} on GPUs ${CUDA_VISIBLE_DEVICES}"
torchrun --nproc_per_node=${NPROC} --master_port=29511 launch.py --config "${CONFIG}" 2>&1 | tee "logs/train_${CONFIG}.log"
