#!/usr/bin/env bash
# Stage 0 (static images) followed by stage 3 (DAVIS + YouTubeVOS), as in the paper.
# Tested on 2x A100 / 4x V100 (batch size is split evenly across GPUs).
#
# usage: bash scripts/train_s03.sh <exp_id> [num_gpus]
set -e

EXP_ID=${1:-retrain}
NUM_GPUS=${2:-2}
MASTER_PORT=${MASTER_PORT:-25763}

# Datasets are expected under ../ (see docs/TRAINING.md)
STATIC_ROOT=../static
YV_ROOT=../YouTube
DAVIS_ROOT=../DAVIS

# which GPUs to use; override from the environment, e.g. GPUS=4,5 bash scripts/train_s03.sh
GPUS=${GPUS:-0,1}

export OMP_NUM_THREADS=4
export CUDA_VISIBLE_DEVICES=${GPUS}
# reduce fragmentation on long stage-3 runs (num_frames=8)
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

echo "Training ${EXP_ID} on GPUs ${GPUS} (${NUM_GPUS} processes)"

python -m torch.distributed.run --master_port ${MASTER_PORT} --nproc_per_node=${NUM_GPUS} train.py \
    --exp_id ${EXP_ID} \
    --stage 03 \
    --static_root ${STATIC_ROOT} \
    --yv_root ${YV_ROOT} \
    --davis_root ${DAVIS_ROOT} \
    --s0_batch_size 16 \
    --s3_batch_size 8 \
    --num_workers 16

# quick sanity check of the final weights on DAVIS 2017 val
LAST=$(ls -t saves/*/*_s03_*.pth 2>/dev/null | grep -v checkpoint | head -n 1)
if [ -n "${LAST}" ]; then
    CUDA_VISIBLE_DEVICES=${GPUS%%,*} python eval.py --model ${LAST} --output ../output/${EXP_ID}_d17 --dataset D17
fi
