#!/usr/bin/env bash
# Reproduce the SpectralFormer tables (Indian Pines / Pavia / Houston2013).
# demo.py picks the card itself from --gpu_id, so nothing else needs exporting here.
set -e

GPU=${GPU:-0}
EPOCHS=${EPOCHS:-300}

mkdir -p log results

# ---------------- Indian Pines ----------------
# pixel-wise ViT baseline
python demo.py --dataset='Indian' --epoches=${EPOCHS} --patches=1 --band_patches=1 \
    --mode='ViT' --weight_decay=0 --gpu_id=${GPU} | tee results/indian_vit.log
# SpectralFormer, pixel-wise
python demo.py --dataset='Indian' --epoches=${EPOCHS} --patches=1 --band_patches=3 \
    --mode='CAF' --weight_decay=0 --gpu_id=${GPU} | tee results/indian_caf_pixel.log
# SpectralFormer, patch-wise
python demo.py --dataset='Indian' --epoches=${EPOCHS} --patches=7 --band_patches=3 \
    --mode='CAF' --weight_decay=5e-3 --gpu_id=${GPU} | tee results/indian_caf_patch.log

# ---------------- Pavia University ----------------
python demo.py --dataset='Pavia' --epoches=${EPOCHS} --patches=1 --band_patches=1 \
    --mode='ViT' --weight_decay=0 --gpu_id=${GPU} | tee results/pavia_vit.log
python demo.py --dataset='Pavia' --epoches=${EPOCHS} --patches=7 --band_patches=3 \
    --mode='CAF' --weight_decay=5e-3 --gpu_id=${GPU} | tee results/pavia_caf_patch.log

# ---------------- Houston 2013 ----------------
python demo.py --dataset='Houston' --epoches=${EPOCHS} --patches=1 --band_patches=3 \
    --mode='CAF' --weight_decay=0 --gpu_id=${GPU} | tee results/houston_caf_pixel.log
python demo.py --dataset='Houston' --epoches=${EPOCHS} --patches=7 --band_patches=3 \
    --mode='CAF' --weight_decay=5e-3 --gpu_id=${GPU} | tee results/houston_caf_patch.log

# ---------------- test with the released weights ----------------
python demo.py --dataset='Indian' --flag_test='test' --patches=7 --band_patches=3 \
    --mode='CAF' --gpu_id=${GPU}

echo "all runs finished; see results/*.log"
