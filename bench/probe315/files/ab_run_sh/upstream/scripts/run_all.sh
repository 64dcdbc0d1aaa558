#!/usr/bin/env bash
# Run the batched AB3DMOT tracker on KITTI and nuScenes and evaluate.
# usage: bash scripts/run_all.sh [GPU_ID]
set -e

GPU_ID=${1:-0}
export CUDA_VISIBLE_DEVICES=${GPU_ID}
export PYTHONPATH=${PYTHONPATH}:$(pwd):$(pwd)/Xinshuo_PyToolbox

# make sure a GPU is actually visible before burning an hour on CPU
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

############## KITTI ##############
for DET in pointrcnn pvrcnn; do
    python3 main.py --dataset KITTI --split val --det_name ${DET} --device cuda
    python3 scripts/post_processing/trk_conf_threshold.py --dataset KITTI --result_sha ${DET}_val_H1
    python3 scripts/post_processing/visualization.py --result_sha ${DET}_val_H1_thres --split val
    python3 scripts/KITTI/evaluate.py ${DET}_val_H1 1 3D 0.25
done

############## nuScenes ##############
python3 main.py --dataset nuScenes --split val --det_name centerpoint --device cuda --benchmark
python3 scripts/nuScenes/export_kitti.py kitti_trk_result2nuscenes --result_name centerpoint_val_H1 --split val
python3 scripts/nuScenes/evaluate.py --result_path ./results/nuScenes/centerpoint_val_H1/results_val.json

# CPU reference run for the latency table in the README
python3 main.py --dataset nuScenes --split val --det_name centerpoint --device cpu --benchmark
