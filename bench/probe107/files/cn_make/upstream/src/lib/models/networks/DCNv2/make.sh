#!/usr/bin/env bash
# Build the DCNv2 CUDA extension used by CenterNet's DLA-34 / ResNet-DCN backbones.
# Requires nvcc from the same CUDA version PyTorch was built with.
set -e

CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
export PATH=${CUDA_PATH}/bin:$PATH
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-"6.0;6.1;7.0;7.5"}

cd src/cuda

# compile dcn
nvcc -c -o dcn_v2_im2col.cu.o dcn_v2_im2col.cu -x cu -Xcompiler -fPIC

# compile dcn-roi-pooling
nvcc -c -o dcn_v2_psroi_pooling_cuda.cu.o dcn_v2_psroi_pooling_cuda.cu -x cu -Xcompiler -fPIC

cd -
rm -rf build *.so
python setup.py build develop
