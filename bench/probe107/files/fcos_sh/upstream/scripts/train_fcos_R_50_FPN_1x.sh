#!/usr/bin/env bash
# Train FCOS R-50-FPN 1x on COCO with 8 GPUs (16 images per batch, 2 per GPU).
# Usage: bash scripts/train_fcos_R_50_FPN_1x.sh [extra cfg opts]
set -e

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NGPUS=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\n' | wc -l)
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=1

CONFIG=configs/fcos/fcos_imprv_R_50_FPN_1x.yaml
OUTPUT_DIR=training_dir/fcos_imprv_R_50_FPN_1x
PORT=$((RANDOM + 10000))

mkdir -p ${OUTPUT_DIR}
nvidia-smi --query-gpu=index,name,memory.total --format=csv | tee ${OUTPUT_DIR}/gpus.csv

python -m torch.distributed.launch \
    --nproc_per_node=${NGPUS} \
    --master_port=${PORT} \
    tools/train_net.py \
    --config-file ${CONFIG} \
    DATALOADER.NUM_WORKERS 2 \
    SOLVER.IMS_PER_BATCH $((2 * NGPUS)) \
    OUTPUT_DIR ${OUTPUT_DIR} \
    "$@" 2>&1 | tee ${OUTPUT_DIR}/train.log

# evaluate the final checkpoint on minival
python -m torch.distributed.launch \
    --nproc_per_node=${NGPUS} \
    --master_port=$((PORT + 1)) \
    tools/test_net.py \
    --config-file ${CONFIG} \
    MODEL.WEIGHT ${OUTPUT_DIR}/model_final.pth \
    TEST.IMS_PER_BATCH $((4 * NGPUS)) 2>&1 | tee ${OUTPUT_DIR}/test.log
