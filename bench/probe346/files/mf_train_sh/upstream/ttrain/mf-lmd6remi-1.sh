#!/bin/bash
# Museformer on LMD (6 tracks, REMI-like encoding), 4x V100 32GB.
# Usage: bash ttrain/mf-lmd6remi-1.sh

set -e

MODEL_NAME='mf-lmd6remi-1'
DATA_DIR=data-bin/lmd6remi

export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}
NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)
echo "Training on ${NUM_GPUS} GPUs: ${CUDA_VISIBLE_DEVICES}"

export OMP_NUM_THREADS=4
export PYTHONPATH=$(pwd):$PYTHONPATH

PEAK_LR=${PEAK_LR:-5e-4}
WARMUP_UPDATES=${WARMUP_UPDATES:-16000}
MAX_UPDATE=${MAX_UPDATE:-1000000}
UPDATE_FREQ=${UPDATE_FREQ:-1}
NUM_WORKERS=${NUM_WORKERS:-11}
TRUNCATE_TRAIN=${TRUNCATE_TRAIN:-15360}

mkdir -p log checkpoints/$MODEL_NAME

fairseq-train \
  $DATA_DIR \
  --user-dir museformer \
  --task museformer_language_modeling \
  --arch museformer_lm \
  --num-layers 4 \
  --fine-offsets '1,2,4,8,12,16,24,32' \
  --block-size 64 \
  --attention-impl triton \
  --tokens-per-sample 100000 \
  --truncate-train $TRUNCATE_TRAIN \
  --truncate-valid 10240 \
  --batch-size 1 \
  --update-freq $UPDATE_FREQ \
  --optimizer adam --adam-betas '(0.9, 0.98)' --adam-eps 1e-9 --weight-decay 0.01 \
  --lr $PEAK_LR --lr-scheduler inverse_sqrt --warmup-updates $WARMUP_UPDATES \
  --max-update $MAX_UPDATE \
  --validate-interval 1000000000 \
  --save-interval 1000000000 \
  --save-interval-updates 5000 \
  --fp16 \
  --log-format simple --log-interval 10 \
  --tensorboard-logdir tb_log/$MODEL_NAME \
  --num-workers $NUM_WORKERS \
  --save-dir checkpoints/$MODEL_NAME \
  --ddp-backend=legacy_ddp \
  --distributed-world-size $NUM_GPUS \
  | tee log/${MODEL_NAME}.log
