#!/bin/bash
# Pre-train MusicBERT (masked octuple LM) on LMD-full / MSD.
#   bash train_mask.sh lmd_full small
set -e

# --- environment -------------------------------------------------------------
export NCCL_P2P_DISABLE=1   # RTX 3090 boxes without NVLink hang in P2P all-reduce
export OMP_NUM_THREADS=8

# --- hyper-parameters --------------------------------------------------------
DATA_NAME=${1:-lmd_full}
MODEL_SIZE=${2:-base}

TOTAL_UPDATES=125000            # Total number of training steps
WARMUP_UPDATES=25000            # Warmup the learning rate over this many updates
PEAK_LR=0.0005                  # Peak learning rate, adjust as needed
TOKENS_PER_SAMPLE=8192          # Max sequence length
MAX_POSITIONS=8192              # Num. positional embeddings (usually same as above)
BATCH_SIZE=256                  # Number of sequences per batch (batch size)
MAX_SENTENCES=4                 # Number of sequences per batch per GPU (batch size)
N_GPU_LOCAL=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
UPDATE_FREQ=$((${BATCH_SIZE} / ${MAX_SENTENCES} / ${N_GPU_LOCAL}))

MODEL_NAME=musicbert_${MODEL_SIZE}
DATA_DIR=${DATA_NAME}_data_bin
TB_DIR=tb_log/${MODEL_NAME}_${DATA_NAME}

echo "local GPUs: ${N_GPU_LOCAL}, update_freq: ${UPDATE_FREQ}"

fairseq-train ${DATA_DIR} --user-dir musicbert \
    --restore-file checkpoints/checkpoint_last_${MODEL_NAME}.pt \
    --task masked_lm --criterion masked_lm \
    --arch ${MODEL_NAME} --sample-break-mode complete --tokens-per-sample ${TOKENS_PER_SAMPLE} \
    --optimizer adam --adam-betas '(0.9,0.98)' --adam-eps 1e-6 --clip-norm 0.0 \
    --lr-scheduler polynomial_decay --lr ${PEAK_LR} --warmup-updates ${WARMUP_UPDATES} --total-num-update ${TOTAL_UPDATES} \
    --dropout 0.1 --attention-dropout 0.1 --weight-decay 0.01 \
    --batch-size ${MAX_SENTENCES} --update-freq ${UPDATE_FREQ} \
    --max-update ${TOTAL_UPDATES} --log-format simple --log-interval 100 \
    --tensorboard-logdir ${TB_DIR} \
    --save-dir checkpoints/${MODEL_NAME}_${DATA_NAME} \
    --fp16 --memory-efficient-fp16 \
    --ddp-backend=legacy_ddp \
    --distributed-world-size ${N_GPU_LOCAL} \
    --num-workers 8 \
    | tee -a ${MODEL_NAME}_${DATA_NAME}_train.log
