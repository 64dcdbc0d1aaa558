#!/bin/bash
# Train SelfTalk on VOCASET (single GPU) and evaluate the best checkpoint.
set -e

GPU=${GPU:-0}
EPOCHS=${EPOCHS:-100}

export HF_HOME=${HF_HOME:-$HOME/.cache/huggingface}
export TOKENIZERS_PARALLELISM=false

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

CUDA_VISIBLE_DEVICES=${GPU} python main.py \
    --dataset vocaset \
    --vertice_dim 15069 \
    --feature_dim 512 \
    --period 30 \
    --max_epoch ${EPOCHS} \
    --train_subjects "FaceTalk_170728_03272_TA FaceTalk_170904_00128_TA FaceTalk_170725_00137_TA FaceTalk_170915_00223_TA FaceTalk_170811_03274_TA FaceTalk_170913_03279_TA FaceTalk_170904_03276_TA FaceTalk_170912_03278_TA" \
    --val_subjects "FaceTalk_170811_03275_TA FaceTalk_170908_03277_TA" \
    --test_subjects "FaceTalk_170809_00138_TA FaceTalk_170731_00024_TA" \
    2>&1 | tee logs/train_vocaset_$(date +%Y%m%d_%H%M%S).log

python compute_metrics.py --dataset vocaset --pred_path vocaset/result --gt_path vocaset/vertices_npy
