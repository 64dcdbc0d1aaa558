#!/usr/bin/env bash
# Build the Cython / CUDA extensions of UPSNet and fetch the ImageNet-pretrained backbones.
# Needs a CUDA toolkit (nvcc) that matches the CUDA version of your PyTorch build.

set -e

export PATH=/usr/local/cuda/bin:$PATH
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

echo "Using nvcc: $(which nvcc)"
nvcc --version | tail -n 1

cd upsnet/bbox
python setup_bbox.py build_ext --inplace
cd ../..

cd upsnet/operators
python setup.py build_ext --inplace
cd ../..

mkdir -p model/pretrained_model
cd model/pretrained_model
wget -nc https://github.com/uber-research/UPSNet/releases/download/v0.1/resnet_50.pth
wget -nc https://github.com/uber-research/UPSNet/releases/download/v0.1/resnet_101.pth
cd ../..

echo "Done. You can now run: python upsnet/upsnet_end2end_train.py --cfg upsnet/experiments/upsnet_resnet50_cityscapes_16gpu.yaml"
