#!/bin/bash
# Train all five folds of the three backbones on two GPUs in parallel, then build the
# ensemble submission.  Logs go to ./output/<exp>/train.log
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0,1
export CUBLAS_WORKSPACE_CONFIG=:4096:8

nvidia-smi

# GPU 0: EfficientNet-B4 NS, GPU 1: SE-ResNeXt50 (folds run sequentially on each GPU)
python train.py --config configs/effnet_b4_ns.yaml --fold -1 --gpu 0 &
python train.py --config configs/seresnext50_32x4d.yaml --fold -1 --gpu 1 &
wait

# ViT-B/16 at 384px needs both GPUs' worth of time; run it afterwards on GPU 0
python train.py --config configs/vit_base_384.yaml --fold -1 --gpu 0

python inference.py \
    --configs configs/effnet_b4_ns.yaml configs/seresnext50_32x4d.yaml configs/vit_base_384.yaml \
    --weights ./output/effnet_b4_ns_512 ./output/seresnext50_512 ./output/vit_base_384 \
    --out submission.csv
