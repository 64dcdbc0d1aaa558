#!/usr/bin/env bash
# Two-stage DIP training: synthetic AMASS pre-training, then DIP-IMU fine-tuning.
#
#   bash scripts/train_dip.sh            # uses GPU 0
#   GPU=1 bash scripts/train_dip.sh      # pick another card
set -e

GPU=${GPU:-0}
DATA_ROOT=${DATA_ROOT:-data}
RUN_ROOT=${RUN_ROOT:-runs/$(date +%Y%m%d_%H%M%S)}

export CUDA_VISIBLE_DEVICES=${GPU}
export OMP_NUM_THREADS=4
# uncomment to get synchronous CUDA errors when debugging NaNs in the LSTM
# export CUDA_LAUNCH_BLOCKING=1

echo "== environment =="
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

mkdir -p "${RUN_ROOT}"

if [ ! -d "${DATA_ROOT}/synthetic" ]; then
    echo "== stage 0: synthesising IMU data from AMASS (4 GPUs) =="
    CUDA_VISIBLE_DEVICES=0,1,2,3 python preprocess/synthesize_amass_imu.py \
        --amass "${DATA_ROOT}/raw/AMASS" \
        --support-dir support_data \
        --out "${DATA_ROOT}/synthetic" \
        --dipimu "${DATA_ROOT}/raw/DIP_IMU" \
        --workers 4
fi

echo "== stage 1: synthetic AMASS pre-training =="
python train_dip.py \
    --data "${DATA_ROOT}/synthetic" \
    --save-dir "${RUN_ROOT}/pretrain" \
    --epochs 100 --batch-size 16 --lr 1e-3 \
    --gpu 0 --workers 8 2>&1 | tee "${RUN_ROOT}/pretrain.log"

echo "== stage 2: DIP-IMU fine-tuning =="
python train_dip.py \
    --data "${DATA_ROOT}/dip_imu" \
    --finetune "${RUN_ROOT}/pretrain/best.pth" \
    --save-dir "${RUN_ROOT}/finetune" \
    --epochs 30 --batch-size 16 --lr 1e-4 \
    --gpu 0 --workers 8 2>&1 | tee "${RUN_ROOT}/finetune.log"

echo "== evaluation on DIP-IMU test (s_09, s_10) =="
python evaluate_dip.py \
    --data "${DATA_ROOT}/dip_imu/test" \
    --ckpt "${RUN_ROOT}/finetune/best.pth" \
    --online --past 20 --future 5 | tee "${RUN_ROOT}/eval.txt"

echo "done: ${RUN_ROOT}"
