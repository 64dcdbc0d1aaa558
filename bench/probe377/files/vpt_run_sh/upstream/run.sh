#!/usr/bin/env bash
# VPT-deep on CUB-200-2011 with the best setting found by tune_fgvc.py
# (ViT-B/16 pre-trained on ImageNet-21k, 10 prompt tokens, 5 seeds)

model_root=./pretrained
data_path=./data/CUB_200_2011
output_dir=./output/cub_vpt_deep

for seed in "42" "44" "82" "100" "800"; do
    CUDA_VISIBLE_DEVICES=0 python train.py \
        --config-file configs/prompt/cub.yaml \
        MODEL.TYPE "vit" \
        DATA.BATCH_SIZE "64" \
        MODEL.PROMPT.DEEP "True" \
        MODEL.PROMPT.DROPOUT "0.1" \
        MODEL.PROMPT.NUM_TOKENS "10" \
        DATA.FEATURE "sup_vitb16_imagenet21k" \
        SEED ${seed} \
        MODEL.MODEL_ROOT "${model_root}" \
        DATA.DATAPATH "${data_path}" \
        OUTPUT_DIR "${output_dir}/seed${seed}" \
        SOLVER.BASE_LR "0.25" \
        SOLVER.WEIGHT_DECAY "0.001"
done
