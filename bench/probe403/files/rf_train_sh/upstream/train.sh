#!/usr/bin/env bash
# Fine-tune RETFound on a downstream fundus/OCT task.
# Usage: GPU_ID=0 bash train.sh IDRiD RETFound_mae_natureCFP
#
# The data folder is expected to look like
#   ${DATA_PATH}/train/<class>/*.png
#   ${DATA_PATH}/val/<class>/*.png
#   ${DATA_PATH}/test/<class>/*.png

DATASET=${1:-IDRiD}
FINETUNE=${2:-RETFound_mae_natureCFP}
NUM_CLASS=${NUM_CLASS:-5}
DATA_PATH=${DATA_PATH:-./data/${DATASET}}
TASK=${FINETUNE}-${DATASET}

# single GPU by default; set NPROC>1 for DDP on a multi-GPU node
NPROC=${NPROC:-1}
export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}
export OMP_NUM_THREADS=8

torchrun --nproc_per_node=${NPROC} --master_port=48766 main_finetune.py \
    --model RETFound_mae \
    --savemodel \
    --global_pool \
    --batch_size 16 \
    --world_size ${NPROC} \
    --epochs 50 \
    --blr 5e-3 --layer_decay 0.65 \
    --weight_decay 0.05 --drop_path 0.2 \
    --nb_classes ${NUM_CLASS} \
    --data_path ${DATA_PATH} \
    --input_size 224 \
    --task ${TASK} \
    --finetune ${FINETUNE}

# evaluation only, with the best checkpoint
# torchrun --nproc_per_node=1 --master_port=48766 main_finetune.py \
#     --model RETFound_mae --eval --resume ./output_dir/${TASK}/checkpoint-best.pth \
#     --nb_classes ${NUM_CLASS} --data_path ${DATA_PATH} --input_size 224 --task ${TASK}
