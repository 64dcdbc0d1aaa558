#!/usr/bin/env bash
# CLIP4Caption fine-tuning on MSR-VTT (9k split) with CLIP ViT-B/32 frame features.
# 4 x V100 32G, one process per GPU.
set -euo pipefail

DATA_PATH=${DATA_PATH:-data/msrvtt}
INIT_MODEL=${INIT_MODEL:-weight/univl.pretrained.bin}
OUTPUT_ROOT=${OUTPUT_ROOT:-ckpts}
NPROC=${NPROC:-4}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_P2P_DISABLE=1
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_DISTRIBUTED_DEBUG=OFF

python -m torch.distributed.launch --nproc_per_node=${NPROC} --master_port=29517 \
    main_task_caption.py \
    --do_train --num_thread_reader=4 \
    --epochs=50 --batch_size=128 \
    --n_display=50 \
    --train_csv ${DATA_PATH}/MSRVTT_train.9k.csv \
    --val_csv ${DATA_PATH}/MSRVTT_JSFUSION_test.csv \
    --data_path ${DATA_PATH}/MSRVTT_data.json \
    --features_path ${DATA_PATH}/msrvtt_clip_vit_b32.pickle \
    --output_dir ${OUTPUT_ROOT}/ckpt_msrvtt_caption \
    --bert_model bert-base-uncased --do_lower_case \
    --lr 3e-5 --max_words 48 --max_frames 20 \
    --batch_size_val 32 --visual_num_hidden_layers 2 \
    --decoder_num_hidden_layers 3 --datatype msrvtt --stage_two \
    --init_model ${INIT_MODEL} --fp16
