#!/bin/bash
# NeRV on the "big buck bunny" 720p clip (132 frames).
# Paper setting: 4 x RTX 2080Ti, 1200 epochs for the S/M/L models.
# Usage: bash scripts/run_bunny.sh [S|M|L]

SIZE=${1:-S}
EPOCHS=${EPOCHS:-1200}
OUT=bunny_ab

case $SIZE in
  S) FC_HW_DIM=9_16_26 ;;
  M) FC_HW_DIM=9_16_58 ;;
  L) FC_HW_DIM=9_16_112 ;;
  *) echo "unknown size $SIZE"; exit 1 ;;
esac

export CUDA_VISIBLE_DEVICES=0,1,2,3

# 1) train
python train_nerv.py -e ${EPOCHS} --cycles 1 --lower-width 96 --num-blocks 1 --dataset bunny --frame_gap 1 \
    --outf ${OUT} --embed 1.25_40 --stem_dim_num 512_1 --reduction 2 --fc_hw_dim ${FC_HW_DIM} --expansion 1 \
    --single_res --loss Fusion6 --warmup 0.2 --lr_type cosine --strides 5 2 2 2 2 --conv_type conv \
    -b 4 --lr 0.0005 --norm none --act swish -d

CKPT=output/${OUT}/bunny/embed1.25_40_512_1_fc_${FC_HW_DIM}__exp1.0_reduce2_low96_blk1_cycle1_gap1_e${EPOCHS}_warm240_b4_conv_lr0.0005_cosine_Fusion6_Strd5,2,2,2,2_SinRes_dist_actswish_/model_latest.pth

# 2) evaluate the 8-bit quantized model on a single card
CUDA_VISIBLE_DEVICES=0 python train_nerv.py -e ${EPOCHS} --cycles 1 --lower-width 96 --num-blocks 1 --dataset bunny --frame_gap 1 \
    --outf ${OUT} --embed 1.25_40 --stem_dim_num 512_1 --reduction 2 --fc_hw_dim ${FC_HW_DIM} --expansion 1 \
    --single_res --loss Fusion6 --warmup 0.2 --lr_type cosine --strides 5 2 2 2 2 --conv_type conv \
    -b 1 --lr 0.0005 --norm none --act swish \
    --weight ${CKPT} --eval_only --quant_bit 8 --quant_axis 0

# 3) pruning + finetune (40% sparsity)
python train_nerv.py -e 100 --cycles 1 --lower-width 96 --num-blocks 1 --dataset bunny --frame_gap 1 \
    --outf ${OUT}_prune --embed 1.25_40 --stem_dim_num 512_1 --reduction 2 --fc_hw_dim ${FC_HW_DIM} --expansion 1 \
    --single_res --loss Fusion6 --warmup 0. --lr_type cosine --strides 5 2 2 2 2 --conv_type conv \
    -b 4 --lr 0.0005 --norm none --act swish -d \
    --weight ${CKPT} --not_resume_epoch --prune_ratio 0.4

nvidia-smi --query-gpu=index,memory.used --format=csv
