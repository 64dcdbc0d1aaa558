#!/usr/bin/env bash
# Neural Scene Flow Prior -- runtime optimisation on Argoverse / nuScenes / KITTI
# Usage: bash scripts/run_argoverse.sh [GPU_ID]
#
# Every sample is optimised from scratch, so this is embarrassingly parallel:
# run one copy per GPU on disjoint partitions.

set -e

GPU_ID=${1:-0}
export CUDA_VISIBLE_DEVICES=${GPU_ID}
export OMP_NUM_THREADS=8

DATA_ROOT=${DATA_ROOT:-/data/sceneflow}
EXP_PREFIX=nsfp_$(date +%m%d)

echo "Running NSFP on GPU ${GPU_ID}"
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv -i ${GPU_ID}

# Argoverse (2,691 samples, ~ 70k points each)
python optimization.py \
    --exp_name ${EXP_PREFIX}_argoverse \
    --dataset ArgoverseSceneFlowDataset \
    --dataset_path ${DATA_ROOT}/argoverse \
    --batch_size 1 \
    --iters 5000 \
    --compute_metrics \
    --use_all_points \
    --hidden_units 128 \
    --lr 0.008 \
    --backward_flow \
    --early_patience 100 \
    --visualize_off \
    --time

# nuScenes (310 samples)
python optimization.py \
    --exp_name ${EXP_PREFIX}_nuscenes \
    --dataset NuScenesSceneFlowDataset \
    --dataset_path ${DATA_ROOT}/nuscenes \
    --batch_size 1 \
    --iters 5000 \
    --compute_metrics \
    --use_all_points \
    --hidden_units 128 \
    --lr 0.008 \
    --backward_flow \
    --early_patience 100 \
    --time

# KITTI (lidar, ground removed)
CUDA_LAUNCH_BLOCKING=0 python optimization.py \
    --exp_name ${EXP_PREFIX}_kitti \
    --dataset KITTISceneFlowDataset \
    --dataset_path ${DATA_ROOT}/kitti_rm_ground \
    --batch_size 1 \
    --iters 5000 \
    --compute_metrics \
    --hidden_units 128 \
    --lr 0.001 \
    --backward_flow \
    --early_patience 100 \
    --time

echo "done; results in checkpoints/${EXP_PREFIX}_*/results.csv"
