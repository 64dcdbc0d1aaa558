#!/usr/bin/env bash
# NLSPN on KITTI Depth Completion.
# 4x V100 (32GB) with batch size 25 as in the paper; adjust --gpus / --batch_size
# for smaller cards (e.g. --gpus 0,1 --batch_size 8 on 2x 2080Ti).
set -e

cd "$(dirname "$0")/.."

DATA=${DATA:-/data/KITTIDepthCompletion}
GPUS=${GPUS:-0,1,2,3}
PORT=${PORT:-29500}
SAVE=${SAVE:-NLSPN_KITTI_DC}

# NCCL tuning for the PCIe boxes in our lab (no NVLink, no InfiniBand)
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=1

python main.py --dir_data ${DATA} --data_name KITTIDC --split_json ../data_json/kitti_dc.json \
    --patch_height 240 --patch_width 1216 --top_crop 100 \
    --gpus ${GPUS} --port ${PORT} \
    --loss 1.0*L1+1.0*L2 --epochs 25 --batch_size 25 --max_depth 90.0 \
    --lr 0.001 --decay 10,15,20,25 --gamma 1.0,0.2,0.04,0.008 \
    --num_sample 0 --opt_level O0 --save ${SAVE}

# Test with the last checkpoint on the selected validation set
python main.py --dir_data ${DATA} --data_name KITTIDC --split_json ../data_json/kitti_dc.json \
    --patch_height 240 --patch_width 1216 --top_crop 100 --max_depth 90.0 \
    --gpus 0 --num_sample 0 --test_only --test_crop --save_image \
    --pretrain ../experiments/*${SAVE}/model_00025.pt --save ${SAVE}_test
