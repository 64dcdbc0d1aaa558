#!/usr/bin/env bash
# Full NDF pipeline for the ShapeNet cars experiment.
# Preprocessing runs on CPU only; training and dense point cloud generation need one GPU
# (~11GB for the default num_sample_points_training / batch_size).
set -e

CONFIG=configs/shapenet_cars.txt
GPU=${GPU:-1}

source activate NDF

# 1) convert, scale and sample the raw meshes (CPU, multiprocessing)
python dataprocessing/preprocess.py --config ${CONFIG}

# 2) create the train/val/test split
python dataprocessing/create_split.py --config ${CONFIG}

# 3) train (resumes automatically from the last checkpoint in experiments/<exp_name>/checkpoints)
CUDA_VISIBLE_DEVICES=${GPU} python train.py --config ${CONFIG}

# 4) generate dense point clouds for the test split
CUDA_VISIBLE_DEVICES=${GPU} python generate.py --config ${CONFIG}

# 5) monitor with tensorboard
echo "tensorboard --logdir experiments/shapenet_cars/summary"
nvidia-smi --query-gpu=memory.used,memory.total --format=csv
