#!/usr/bin/env bash
# Train and evaluate H3DNet on ScanNet V2 (single GPU).
#
#   GPU=1 bash scripts/run_scannet.sh            # train + eval on GPU 1
#   GPU=0 STAGE=eval bash scripts/run_scannet.sh # eval only
#
# A 12GB card fits batch size 6 with 40k points; reduce --batch_size otherwise.
set -e

GPU=${GPU:-0}
STAGE=${STAGE:-all}
DATA_PATH=${DATA_PATH:-scannet/scannet_train_detection_data}
LOG_DIR=${LOG_DIR:-log_scannet}
DUMP_DIR=${DUMP_DIR:-eval_scannet}

echo "[run_scannet] GPU=${GPU} STAGE=${STAGE} DATA_PATH=${DATA_PATH}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv,noheader

if [ "${STAGE}" = "all" ] || [ "${STAGE}" = "train" ]; then
    python train_1gpu.py \
        --gpu ${GPU} \
        --data_path ${DATA_PATH} \
        --dataset scannet \
        --log_dir ${LOG_DIR} \
        --num_point 40000 \
        --batch_size 6 \
        --max_epoch 360 \
        --learning_rate 0.005 \
        --lr_decay_steps 200,300 \
        --lr_decay_rates 0.1,0.1 \
        --use_color
fi

if [ "${STAGE}" = "all" ] || [ "${STAGE}" = "eval" ]; then
    CUDA_VISIBLE_DEVICES=${GPU} python eval.py \
        --data_path ${DATA_PATH} \
        --dataset scannet \
        --checkpoint_path ${LOG_DIR}/checkpoint.tar \
        --dump_dir ${DUMP_DIR} \
        --num_point 40000 \
        --cluster_sampling seed_fps \
        --use_3d_nms --use_cls_nms --per_class_proposal \
        --use_color
fi
