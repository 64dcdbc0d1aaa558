#!/usr/bin/env bash
# Depth inference + dynamic fusion on Tanks and Temples.
#   GPU=0 bash scripts/test_tnt.sh ./saved/models/MVSFormer++/model_best.pth intermediate
set -e

CKPT=$1
SPLIT=${2:-intermediate}
TNT_ROOT=${TNT_ROOT:-/data/TankandTemples}
OUTDIR=./outputs_tnt/${SPLIT}
GPU=${GPU:-0}

export CUDA_VISIBLE_DEVICES=$GPU
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
# one scene at a time keeps the 2K-resolution cost volumes under 24GB
export OMP_NUM_THREADS=8

CUDA_LAUNCH_BLOCKING=${DEBUG:-0} python test.py --dataset tt --batch_size 1 \
    --testpath ${TNT_ROOT}/${SPLIT} --testlist ./lists/tanksandtemples/${SPLIT}.txt \
    --resume ${CKPT} --outdir ${OUTDIR} \
    --interval_scale 1.0 --num_view 20 --numdepth 256 --max_h 1088 --max_w 1920 \
    --filter_method dpcd --fp16 --tmps 5.0,5.0,5.0,1.0

python dynamic_fusion.py --testpath ${TNT_ROOT}/${SPLIT} --outdir ${OUTDIR} \
    --device cuda --test_dataset tank --photo_threshold 0.3 \
    --thres_view 5 --dist_base 0.25 --rel_diff_base 0.0008

echo "point clouds written to ${OUTDIR}/*.ply"
