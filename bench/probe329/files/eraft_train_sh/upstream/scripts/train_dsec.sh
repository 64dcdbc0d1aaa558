#!/usr/bin/env bash
# Train E-RAFT on the DSEC optical-flow split and evaluate the final checkpoint.
#
# Usage: bash scripts/train_dsec.sh [experiment_name]
# Expects DSEC_PATH to point at the folder that contains train/ and test/.
# Tested on 2x RTX 3090 (24 GB); with a single 12 GB card use --batch_size 3.
set -e

export CUDA_VISIBLE_DEVICES=0,1
export OMP_NUM_THREADS=4

DSEC_PATH=${DSEC_PATH:-/data/dsec}
NAME=${1:-eraft_dsec}
LOG_DIR=logs/${NAME}

mkdir -p checkpoints runs ${LOG_DIR}

# record the hardware the run was made on
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > ${LOG_DIR}/gpus.csv
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee ${LOG_DIR}/env.txt

python -u train.py \
    --name ${NAME} \
    --dsec_path ${DSEC_PATH} \
    --gpus 0 1 \
    --batch_size 6 \
    --num_workers 8 \
    --num_steps 250000 \
    --lr 0.0002 \
    --wdecay 0.00005 \
    --mixed_precision 2>&1 | tee ${LOG_DIR}/train.log

# evaluation on the test split (single GPU, warm start)
CUDA_VISIBLE_DEVICES=0 python main.py \
    --path ${DSEC_PATH} \
    --dataset dsec \
    --type warm_start \
    --gpu 0 \
    --num_workers 4 2>&1 | tee ${LOG_DIR}/test.log
