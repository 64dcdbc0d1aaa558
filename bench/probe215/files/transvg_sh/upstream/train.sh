#!/bin/bash
# TransVG training / evaluation commands (8 x V100 / A100).
# pretrained DETR weights must be in ./saved_models (see docs/GETTING_STARTED.md)

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL

# ReferItGame
python -m torch.distributed.launch --nproc_per_node=8 --master_port 28887 --use_env train.py \
    --batch_size 8 --lr_bert 0.00001 --aug_crop --aug_scale --aug_translate \
    --backbone resnet50 --detr_model ./saved_models/detr-r50-referit.pth \
    --bert_enc_num 12 --detr_enc_num 6 --dataset referit --max_query_len 20 \
    --output_dir outputs/referit_r50 --epochs 90 --lr_drop 60

# RefCOCO
python -m torch.distributed.launch --nproc_per_node=8 --master_port 28888 --use_env train.py \
    --batch_size 8 --lr_bert 0.00001 --aug_crop --aug_scale --aug_translate \
    --backbone resnet50 --detr_model ./saved_models/detr-r50-unc.pth \
    --bert_enc_num 12 --detr_enc_num 6 --dataset unc --max_query_len 20 \
    --output_dir outputs/refcoco_r50 --epochs 90 --lr_drop 60

# RefCOCO+
python -m torch.distributed.launch --nproc_per_node=8 --master_port 28889 --use_env train.py \
    --batch_size 8 --lr_bert 0.00001 --aug_crop --aug_scale --aug_translate \
    --backbone resnet50 --detr_model ./saved_models/detr-r50-unc.pth \
    --bert_enc_num 12 --detr_enc_num 6 --dataset unc+ --max_query_len 20 \
    --output_dir outputs/refcoco_plus_r50 --epochs 180 --lr_drop 120

# RefCOCOg g-split
python -m torch.distributed.launch --nproc_per_node=8 --master_port 28890 --use_env train.py \
    --batch_size 8 --lr_bert 0.00001 --aug_crop --aug_scale --aug_translate \
    --backbone resnet50 --detr_model ./saved_models/detr-r50-gref.pth \
    --bert_enc_num 12 --detr_enc_num 6 --dataset gref --max_query_len 40 \
    --output_dir outputs/refcocog_gsplit_r50

# Evaluation (single card is enough for the test splits)
CUDA_VISIBLE_DEVICES=0 python eval.py --batch_size 32 --num_workers 4 \
    --bert_enc_num 12 --detr_enc_num 6 --backbone resnet50 --dataset unc --max_query_len 20 \
    --eval_set testA --eval_model ./outputs/refcoco_r50/best_checkpoint.pth --output_dir ./outputs/refcoco_r50
