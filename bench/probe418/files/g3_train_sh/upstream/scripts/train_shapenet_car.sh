#!/usr/bin/env bash
# Train GET3D on ShapeNet cars (8 GPUs, batch 32).
# Usage: bash scripts/train_shapenet_car.sh /path/to/rendered_imgs /path/to/camera
set -e

DATA_PATH=${1:-./data/shapenet_car/img}
CAMERA_PATH=${2:-./data/shapenet_car/camera}
OUT_DIR=${OUT_DIR:-./save_inference_results/shapenet_car}

# the first four GPUs of the box are reserved for the rendering workers
export CUDA_VISIBLE_DEVICES=4,5,6,7
export OMP_NUM_THREADS=8

echo "GPUs visible to this job:"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader

python train_3d.py \
    --outdir="${OUT_DIR}" \
    --data="${DATA_PATH}" \
    --camera_path "${CAMERA_PATH}" \
    --gpus=4 \
    --batch=32 \
    --gamma=40 \
    --data_camera_mode shapenet_car \
    --dmtet_scale 1.0 \
    --use_shapenet_split 1 \
    --one_3d_generator 1 \
    --fp32 0
