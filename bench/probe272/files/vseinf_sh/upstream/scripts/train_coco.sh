#!/usr/bin/env bash
# Train VSE infinity on MS-COCO.
#   region features (BUTD, 36 boxes): fits on one 11GB card (2080Ti)
#   grid features (WSL ResNeXt backbone): needs 2 x V100 32GB with nn.DataParallel
#
# Usage: bash scripts/train_coco.sh [region|grid|wsl]

set -e

DATASET_NAME='coco'
DATA_PATH='/tmp/data/'${DATASET_NAME}
WEIGHT_PATH='/tmp/data/weights'
MODE=${1:-region}

mkdir -p runs

if [ "${MODE}" == "region" ]; then
  CUDA_VISIBLE_DEVICES=0 python3 train.py \
    --data_path ${DATA_PATH} --data_name ${DATASET_NAME} \
    --logger_name runs/${DATASET_NAME}_butd_region_bert/log --model_name runs/${DATASET_NAME}_butd_region_bert \
    --num_epochs=25 --lr_update=15 --learning_rate=.0005 --precomp_enc_type basic --workers 10 \
    --log_step 200 --embed_size 1024 --vse_mean_warmup_epochs 1

elif [ "${MODE}" == "grid" ]; then
  # 2 GPUs, the backbone is wrapped with nn.DataParallel inside train.py
  export CUDA_VISIBLE_DEVICES=0,1
  python3 train.py \
    --data_path ${DATA_PATH} --data_name ${DATASET_NAME} \
    --logger_name runs/${DATASET_NAME}_butd_grid_bert/log --model_name runs/${DATASET_NAME}_butd_grid_bert \
    --num_epochs=25 --lr_update=15 --learning_rate=.0005 --precomp_enc_type backbone --workers 16 \
    --backbone_source detector --vse_mean_warmup_epochs 1 --backbone_warmup_epochs 0 --embedding_warmup_epochs 1 \
    --optim adam --backbone_lr_factor 0.01 --log_step 200 --input_scale_factor 2.0 \
    --backbone_path ${WEIGHT_PATH}/original_updown_backbone.pth

elif [ "${MODE}" == "wsl" ]; then
  export CUDA_VISIBLE_DEVICES=0,1,2,3
  python3 train.py \
    --data_path ${DATA_PATH} --data_name ${DATASET_NAME} \
    --logger_name runs/${DATASET_NAME}_wsl_grid_bert/log --model_name runs/${DATASET_NAME}_wsl_grid_bert \
    --num_epochs=25 --lr_update=15 --learning_rate=.0005 --precomp_enc_type backbone --workers 16 \
    --backbone_source wsl --vse_mean_warmup_epochs 1 --backbone_warmup_epochs 0 --embedding_warmup_epochs 1 \
    --optim adam --backbone_lr_factor 0.01 --log_step 200 --input_scale_factor 2.0 --batch_size 112

else
  echo "unknown mode ${MODE}, expected region|grid|wsl"
  exit 1
fi

# evaluate the best checkpoint on the 5K test split (the GPU is only needed for encoding)
python3 eval.py --dataset ${DATASET_NAME} --data_path ${DATA_PATH} \
  --model_path runs/${DATASET_NAME}_*_bert/model_best.pth --split testall --fold5
