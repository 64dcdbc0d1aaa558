#!/bin/bash
# Train ToCo on PASCAL VOC 2012 (train_aug) with 2 GPUs, then infer/eval the seg head.
# Usage: bash run_voc.sh [GPUS] [PORT]

set -e

GPUS=${1:-"0,1"}
PORT=${2:-29501}
NPROC=$(echo ${GPUS} | tr ',' '\n' | wc -l)

export CUDA_VISIBLE_DEVICES=${GPUS}
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

WORK_DIR=work_dir_voc_wseg
DATA_ROOT=../VOCdevkit/VOC2012

echo "[run_voc] using GPUs ${CUDA_VISIBLE_DEVICES} (${NPROC} procs), master port ${PORT}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

# 1) build the bilateral filter wrapper used by the dense energy (CRF) loss
if [ ! -d wrapper/bilateralfilter/build ]; then
    (cd wrapper/bilateralfilter && swig -python -c++ bilateralfilter.i && python setup.py build)
fi

# 2) train
python -m torch.distributed.launch --nproc_per_node=${NPROC} --master_port=${PORT} \
    scripts/dist_train_voc_seg_neg.py \
    --data_folder ${DATA_ROOT} \
    --work_dir ${WORK_DIR} \
    --spg 2 \
    --backend nccl \
    --save_ckpt

# 3) inference with multi-scale + CRF on val
CKPT=$(ls -t ${WORK_DIR}/*/checkpoints/model_iter_20000.pth | head -n 1)
CUDA_VISIBLE_DEVICES=${GPUS%%,*} python tools/infer_seg_voc.py \
    --model_path ${CKPT} \
    --data_folder ${DATA_ROOT} \
    --infer_set val

echo "[run_voc] done"
