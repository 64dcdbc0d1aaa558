#!/usr/bin/env bash
# Fine-tune CLIP4Clip (seqTransf similarity header) on MSR-VTT 9k split.
# Tested on 4x V100 32GB; batch 128 / 4 GPUs = 32 per GPU.
#
#   bash scripts/run_msrvtt_seqTransf.sh [ViT-B/32|ViT-B/16]

set -e

CLIP_NAME=${1:-"ViT-B/32"}
DATA_PATH=${DATA_PATH:-"data/msrvtt_data"}
VIDEO_PATH=${VIDEO_PATH:-"data/MSRVTT_Videos_compressed"}
OUTPUT_DIR=${OUTPUT_DIR:-"ckpts/ckpt_msrvtt_retrieval_seqTransf"}
NPROC=${NPROC:-4}
MASTER_PORT=${MASTER_PORT:-29501}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=4

mkdir -p ${OUTPUT_DIR}
echo "Using GPUs: ${CUDA_VISIBLE_DEVICES} (nproc=${NPROC})"

python -m torch.distributed.launch --nproc_per_node=${NPROC} --master_port=${MASTER_PORT} \
    main_task_retrieval.py --do_train --num_thread_reader=0 \
    --epochs=5 --batch_size=128 --n_display=50 \
    --train_csv ${DATA_PATH}/MSRVTT_train.9k.csv \
    --val_csv ${DATA_PATH}/MSRVTT_JSFUSION_test.csv \
    --data_path ${DATA_PATH}/MSRVTT_data.json \
    --features_path ${VIDEO_PATH} \
    --output_dir ${OUTPUT_DIR} \
    --lr 1e-4 --max_words 32 --max_frames 12 --batch_size_val 16 \
    --datatype msrvtt --expand_msrvtt_sentences  \
    --feature_framerate 1 --coef_lr 1e-3 \
    --freeze_layer_num 0  --slice_framepos 2 \
    --loose_type --linear_patch 2d --sim_header seqTransf \
    --pretrained_clip_name ${CLIP_NAME} 2>&1 | tee ${OUTPUT_DIR}/train.log
