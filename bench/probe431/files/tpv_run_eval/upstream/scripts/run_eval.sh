#!/bin/bash
# Evaluate a trained TPVFormer occupancy model on nuScenes val.
# eval.py spawns one process per visible GPU, so pick the cards here.

export CUDA_VISIBLE_DEVICES=0,1,2,3
export MASTER_ADDR=127.0.0.1
export MASTER_PORT=29611

PY_CONFIG=${1:-config/tpv04_occupancy.py}
CKPT=${2:-out/tpv04_occupancy/latest.pth}
WORK_DIR=${3:-out/tpv04_occupancy/eval}

mkdir -p ${WORK_DIR}

python eval.py \
    --py-config ${PY_CONFIG} \
    --ckpt-path ${CKPT} \
    --work-dir ${WORK_DIR} 2>&1 | tee ${WORK_DIR}/eval.log
