#!/usr/bin/env bash
# WeakTr on PASCAL VOC 2012: CAM generation stage (train -> CAMs -> CRF -> eval)
# Tested on 4x A100 40GB, CUDA 11.3, PyTorch 1.12.1.

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=1

NUM_GPUS=4
DATA=data/voc12
OUT=WeakTr_results/WeakTr

# ---------------------------------------------------------------------
# 1. train the CAM generator (DeiT-S + fine-grained CAM head)
# ---------------------------------------------------------------------
python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port=29500 --use_env main.py \
    --model deit_small_WeakTr_patch16_224 \
    --batch-size 64 \
    --data-set VOC12 \
    --img-list voc12 \
    --data-path ${DATA} \
    --layer-index 12 \
    --output_dir ${OUT} \
    --reduction 8 \
    --pool-type max \
    --lr 4e-4 \
    --epochs 60

# ---------------------------------------------------------------------
# 2. generate multi-scale CAMs on train (single GPU is enough)
# ---------------------------------------------------------------------
python main.py --model deit_small_WeakTr_patch16_224 \
    --data-set VOC12MS \
    --scales 1.0 0.8 1.2 \
    --img-list voc12 \
    --data-path ${DATA} \
    --output_dir ${OUT} \
    --resume ${OUT}/checkpoint_best.pth \
    --gen_attention_maps \
    --attention-type fused \
    --layer-index 3 \
    --visualize-cls-attn \
    --patch-attn-refine \
    --cam-npy-dir ${OUT}/attn-patchrefine-npy-ms \
    --device cuda:0

# ---------------------------------------------------------------------
# 3. CRF post-processing (CPU, pydensecrf) + evaluation
# ---------------------------------------------------------------------
python evaluation.py --list voc12/train_id.txt \
    --data-path ${DATA} \
    --type npy \
    --predict_dir ${OUT}/attn-patchrefine-npy-ms \
    --out-crf ${OUT}/attn-patchrefine-npy-ms-crf \
    --t 42 \
    --curve True

echo "done, pseudo labels in ${OUT}/attn-patchrefine-npy-ms-crf (GPU not needed for this step)"
