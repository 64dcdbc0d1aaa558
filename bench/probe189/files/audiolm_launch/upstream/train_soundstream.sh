#!/usr/bin/env bash
# Train SoundStream on LibriSpeech train-clean-100 across the 4 GPUs of one box.
#
#   bash train_soundstream.sh --results-folder ./results/soundstream-ls100
#
# needs `pip install audiolm-pytorch accelerate wandb` and a `wandb login`
set -eo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_P2P_DISABLE=1          # rtx 4090s have no p2p / nvlink, nccl hangs on the first all-reduce without this
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=soundstream

NUM_GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
DATA_DIR=${DATA_DIR:-/data/LibriSpeech/train-clean-100}

echo "launching on ${NUM_GPUS} gpus"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

accelerate launch \
    --config_file configs/accelerate_multi_gpu.yaml \
    --num_processes "$NUM_GPUS" \
    --mixed_precision fp16 \
    train_soundstream.py \
    --folder "$DATA_DIR" \
    --batch-size 8 \
    --grad-accum-every 8 \
    --data-max-length-seconds 2 \
    --num-train-steps 1000000 \
    --save-model-every 10000 \
    --use-wandb \
    "$@"
