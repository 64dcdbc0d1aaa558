#!/bin/bash
# Single node fine-tune on CC12M using 4 of the 8 GPUs; GPUs 0-3 are kept for the eval / notebook jobs.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=4,5,6,7
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

RUN_NAME=${RUN_NAME:-"vit-b-16-cc12m-ft"}
LOG_DIR=${LOG_DIR:-"/checkpoints/open_clip/logs"}

cd open_clip/src
torchrun --nproc_per_node 4 --master_port 29511 -m training.main \
    --train-data '/data/cc12m/cc12m-train-{0000..2175}.tar' \
    --train-num-samples 10968539 \
    --dataset-type webdataset \
    --pretrained laion2b_s34b_b88k \
    --model ViT-B-16 \
    --batch-size 320 \
    --lr 1e-5 \
    --wd 0.1 \
    --epochs 5 \
    --warmup 500 \
    --precision amp_bf16 \
    --workers 6 \
    --imagenet-val /data/imagenet/validation/ \
    --torchcompile \
    --grad-checkpointing \
    --local-loss \
    --gather-with-grad \
    --logs "${LOG_DIR}" \
    --name "${RUN_NAME}" \
    --report-to tensorboard

# quick zero-shot sanity check of the last checkpoint on a single GPU
CUDA_VISIBLE_DEVICES=0 python -m training.main \
    --imagenet-val /data/imagenet/validation/ \
    --model ViT-B-16 \
    --pretrained "${LOG_DIR}/${RUN_NAME}/checkpoints/epoch_5.pt" \
    --batch-size 256 \
    --precision amp \
    --logs none
