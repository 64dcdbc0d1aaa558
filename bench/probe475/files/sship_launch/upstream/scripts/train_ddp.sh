#!/usr/bin/env bash
# Two-GPU DDP training of YOLOv5s-SAR on HRSID, then evaluation on SSDD inshore/offshore.
set -e

cd "$(dirname "$0")/.."

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

export OMP_NUM_THREADS=8

python -m torch.distributed.run --nproc_per_node 2 --master_port 29511 train.py \
    --data data/hrsid.yaml --cfg models/yolov5s_sar.yaml --hyp data/hyps/hyp.sar.yaml \
    --weights '' --img 800 --batch-size 32 --epochs 200 --device 0,1 --sync-bn \
    --name hrsid_yolov5s

python val.py --data data/ssdd.yaml --weights runs/train/hrsid_yolov5s/weights/best.pt \
    --img 512 --device 0 --task test --name ssdd_transfer
