#!/usr/bin/env bash
# Reconstruction FID (rFID) of an image tokenizer on ImageNet val 256x256.
#   bash scripts/eval_fid.sh /path/to/vq_ckpt.pt [outdir]
# 1) dump reconstructions with the tokenizer, 2) score them against the
# precomputed reference statistics, 3) IS / KID cross-check with torch-fidelity.
set -euo pipefail

CKPT=$1
OUT=${2:-samples/recon_val256}
GPU=${GPU:-0}
NPROC=${NPROC:-1}

CUDA_VISIBLE_DEVICES=${GPU} python tokenizer/tokenizer_image/reconstruction.py \
    --vq-ckpt ${CKPT} --sample-dir ${OUT} --image-size 256 --per-proc-batch-size 32

# pytorch-fid against the reference statistics (npz with mu / sigma)
python -m pytorch_fid ${OUT} data/imagenet_val_256.npz --device cuda:0 --batch-size 100 --dims 2048

# torch-fidelity for IS / KID as a cross-check
fidelity --gpu 0 --isc --kid --input1 ${OUT} --input2 data/imagenet_val_256 --kid-subset-size 1000

echo "done: ${OUT}"
