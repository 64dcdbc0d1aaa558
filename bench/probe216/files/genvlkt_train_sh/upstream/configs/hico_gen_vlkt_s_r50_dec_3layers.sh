#!/usr/bin/env bash
# GEN-VLKT-S (R50, 3 decoder layers) on HICO-DET, 4 GPUs x batch 2 per GPU.
# We share the box with another job, so pin this one to the second half of the GPUs.
set -x
EXP_DIR=exps/hico_gen_vlkt_s_r50_dec_3layers

export CUDA_VISIBLE_DEVICES=4,5,6,7
export NCCL_P2P_DISABLE=1   # the PCIe-only 8-GPU box hangs in P2P all-reduce otherwise
export OMP_NUM_THREADS=4

python -m torch.distributed.launch \
        --nproc_per_node=4 \
        --master_port 29511 \
        --use_env \
        main.py \
        --pretrained params/detr-r50-pre-2branch-hico.pth \
        --output_dir ${EXP_DIR} \
        --dataset_file hico \
        --hoi_path data/hico_20160224_det \
        --num_obj_classes 80 \
        --num_verb_classes 117 \
        --backbone resnet50 \
        --num_queries 64 \
        --dec_layers 3 \
        --epochs 90 \
        --lr_drop 60 \
        --use_nms_filter \
        --ft_clip_with_small_lr \
        --with_clip_label \
        --with_obj_clip_label \
        --with_mimic \
        --mimic_loss_coef 20 \
        --amp

# evaluation of the best checkpoint (same GPUs)
python -m torch.distributed.launch \
        --nproc_per_node=4 \
        --master_port 29512 \
        --use_env \
        main.py \
        --pretrained ${EXP_DIR}/checkpoint_best.pth \
        --dataset_file hico \
        --hoi_path data/hico_20160224_det \
        --num_obj_classes 80 \
        --num_verb_classes 117 \
        --backbone resnet50 \
        --num_queries 64 \
        --dec_layers 3 \
        --eval \
        --zero_shot_type default \
        --with_clip_label \
        --with_obj_clip_label \
        --use_nms_filter
