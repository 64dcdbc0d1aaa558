#!/usr/bin/env bash
# Build the DCNv2 (MDCN) CUDA extension used by NLSPN.
# You may need to modify the following paths before compiling.
# Tested with CUDA 10.2 / cuDNN 7.6 / PyTorch 1.6 / gcc 7.5.
set -e

cd "$(dirname "$0")"
rm -rf build *.so

CUDA_HOME=/usr/local/cuda-10.2 \
CUDNN_INCLUDE_DIR=/usr/local/cuda-10.2/include \
CUDNN_LIB_DIR=/usr/local/cuda-10.2/lib64 \
TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5" \
python setup.py build develop

python -c "import MDCN; print('MDCN extension loaded from', MDCN.__file__)"
