#!/bin/bash
# Train WSRGlow (x4, 12 kHz -> 48 kHz) on VCTK with 8 GPUs on a single node.
# Usage: bash scripts/train_8gpu.sh [config.json]

CONFIG=${1:-config.json}
LOG_DIR=logs/$(date +%Y%m%d_%H%M%S)

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=4

mkdir -p ${LOG_DIR}
cp ${CONFIG} ${LOG_DIR}/

# record the hardware the run was started on
nvidia-smi > ${LOG_DIR}/hardware.txt

python distributed.py -c ${CONFIG} -s ${LOG_DIR}

echo "done, logs in ${LOG_DIR}"
