#!/usr/bin/env bash
# Build the CUDA kernels and the cffi wrappers used by lib/model.
# Usage:  cd lib && sh make.sh
# Requires: CUDA toolkit (nvcc), PyTorch 0.4.x (torch.utils.ffi), cffi.

set -e

CUDA_PATH=/usr/local/cuda/
export CUDA_HOME=${CUDA_HOME:-$CUDA_PATH}
export PATH=$CUDA_HOME/bin:$PATH
export LD_LIBRARY_PATH=$CUDA_HOME/lib64:$LD_LIBRARY_PATH

python setup.py build_ext --inplace
rm -rf build

# Choose the compute capabilities to build for. Titan X (Maxwell) = 5.2,
# GTX 1080 / Titan Xp = 6.1, V100 = 7.0, RTX 2080 Ti = 7.5.
CUDA_ARCH="-gencode arch=compute_30,code=sm_30 \
           -gencode arch=compute_35,code=sm_35 \
           -gencode arch=compute_50,code=sm_50 \
           -gencode arch=compute_52,code=sm_52 \
           -gencode arch=compute_60,code=sm_60 \
           -gencode arch=compute_61,code=sm_61 \
           -gencode arch=compute_70,code=sm_70 "

if ! command -v nvcc >/dev/null 2>&1; then
    echo "nvcc not found: install the CUDA toolkit and put $CUDA_HOME/bin on PATH" >&2
    exit 1
fi
nvcc --version

# compile NMS
cd model/nms/src
echo "Compiling nms kernels by nvcc..."
nvcc -c -o nms_cuda_kernel.cu.o nms_cuda_kernel.cu \
     -x cu -Xcompiler -fPIC $CUDA_ARCH

cd ../
python build.py  # nms ffi

# compile roi_pooling
cd ../../
cd model/roi_pooling/src
echo "Compiling roi pooling kernels by nvcc..."
nvcc -c -o roi_pooling.cu.o roi_pooling_kernel.cu \
     -x cu -Xcompiler -fPIC $CUDA_ARCH
cd ../
python build.py  # roi_pooling ffi

# compile roi_align
cd ../../
cd model/roi_align/src
echo "Compiling roi align kernels by nvcc..."
nvcc -c -o roi_align_kernel.cu.o roi_align_kernel.cu \
     -x cu -Xcompiler -fPIC $CUDA_ARCH
cd ../
python build.py  # roi_align ffi

# compile roi_crop
cd ../../
cd model/roi_crop/src
echo "Compiling roi crop kernels by nvcc..."
nvcc -c -o roi_crop_cuda_kernel.cu.o roi_crop_cuda_kernel.cu \
     -x cu -Xcompiler -fPIC $CUDA_ARCH
cd ../
python build.py  # roi_crop ffi

# the all-in-one builder does the same for every module
cd ../../
python build_ffi.py

# sanity check: the extensions must import and see the GPU
python -c "import torch; assert torch.cuda.is_available(), 'no GPU visible'; from model.roi_align._ext import roi_align; print('ok')"
