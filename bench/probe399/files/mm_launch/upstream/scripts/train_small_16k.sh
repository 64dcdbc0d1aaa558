#!/bin/bash
# Train MMAudio-S-16kHz on one node with 4 GPUs (H100 80GB).
# The effective batch size (512) is split across GPUs by train.py.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=4
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

NUM_GPUS=4
EXP_ID=${1:-small_16k_$(date +%Y%m%d)}

torchrun --standalone --nproc_per_node=${NUM_GPUS} \
    train.py \
    exp_id=${EXP_ID} \
    model=small_16k \
    batch_size=512 \
    compile=True \
    amp=True

nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv
