#!/bin/bash
# SwinBERT on MSRVTT, 8 x V100-32GB, DeepSpeed fp16.
# run inside the docker image built from docker/Dockerfile:
#   sh launch_container.sh $DATA_DIR $MODEL_DIR $OUTPUT_DIR
#   bash scripts/msrvtt-train.sh

export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=4
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256

NUM_GPUS=${NUM_GPUS:-8}
OUTPUT_DIR=${OUTPUT_DIR:-./output/msrvtt_vidswinbert_8frm}

nvidia-smi

python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port=45678 \
    src/tasks/run_caption_VidSwinBert.py \
    --config src/configs/VidSwinBert/msrvtt_8frm_default.json \
    --train_yaml MSRVTT-v2/train_32frames.yaml \
    --val_yaml MSRVTT-v2/val_32frames.yaml \
    --per_gpu_train_batch_size 6 \
    --per_gpu_eval_batch_size 6 \
    --num_train_epochs 15 \
    --learning_rate 0.0003 \
    --max_num_frames 32 \
    --pretrained_2d 0 \
    --backbone_coef_lr 0.05 \
    --mask_prob 0.5 \
    --max_masked_token 45 \
    --zero_opt_stage 1 \
    --mixed_precision_method deepspeed \
    --deepspeed_fp16 \
    --gradient_accumulation_steps 1 \
    --learn_mask_enabled \
    --loss_sparse_w 0.5 \
    --use_fused_adam true \
    --output_dir ${OUTPUT_DIR}
