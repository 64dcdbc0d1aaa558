#!/bin/bash
# Build the custom CUDA ops used by CenterPoint detection + tracking.
# Tested with CUDA 10.0 / 11.1, gcc 7.5, PyTorch 1.7 / 1.9.
set -e

export PYTHONPATH="${PYTHONPATH}:$(pwd)"
export PATH=/usr/local/cuda-10.0/bin:$PATH
export CUDA_PATH=/usr/local/cuda-10.0
export CUDA_HOME=/usr/local/cuda-10.0
export LD_LIBRARY_PATH=/usr/local/cuda-10.0/lib64:$LD_LIBRARY_PATH

# sanity check: the toolkit that builds the ops must match the one torch was built with
nvcc --version
python -c "import torch; print('torch', torch.__version__, 'built with CUDA', torch.version.cuda)"

# rotated NMS / 3D IoU (used by CenterHead.post_processing and the tracker eval)
cd det3d/ops/iou3d_nms
python setup.py build_ext --inplace

# deformable conv for the FeatureAdaption block of the center head
cd .. && cd dcn
python setup.py build_ext --inplace

cd ../../..
echo "Done building det3d ops."
