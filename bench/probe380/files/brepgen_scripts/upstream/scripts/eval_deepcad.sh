#!/bin/bash
# Sample unconditional DeepCAD B-reps and evaluate coverage / MMD / JSD against the test split.
# Point clouds are sampled on the CPU from the STL output; the metric itself runs on one GPU.

SAVE_DIR=samples/deepcad
REF_DIR=data_process/deepcad_test_pcd

mkdir -p ${SAVE_DIR}

# 1) generate (writes .step / .stl into ${SAVE_DIR}; stop with Ctrl-C once enough samples exist)
CUDA_VISIBLE_DEVICES=0 timeout 6h python sample.py --mode deepcad

# 2) sample surface point clouds (OpenCascade / trimesh, CPU only)
python data_process/sample_points.py --in_dir ${SAVE_DIR} --out_dir ${SAVE_DIR}_pcd --n_points 2000 --workers 32

# 3) metrics
python eval/pc_metric.py --fake ${SAVE_DIR}_pcd --real ${REF_DIR} --n_test 1000 --multi 3 --times 10 -g 0
