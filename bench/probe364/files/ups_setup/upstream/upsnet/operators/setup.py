# ---------------------------------------------------------------------------
# Unified Panoptic Segmentation Network
#
# Copyright (c) 2018-2019 Uber Technologies, Inc.
#
# Licensed under the Uber Non-Commercial License (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at the root directory of this project.
#
# Written by Yuwen Xiong
# ---------------------------------------------------------------------------
#
# Builds the CUDA operators used by UPSNet (RoIAlign, deformable conv, NMS).
# Run `python setup.py build_ext --inplace` from this directory (init.sh does it for you).

import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))

nvcc_flags = [
    '-D__CUDA_NO_HALF_OPERATORS__',
    '-D__CUDA_NO_HALF_CONVERSIONS__',
    '-D__CUDA_NO_HALF2_OPERATORS__',
    '-gencode=arch=compute_60,code=sm_60',
    '-gencode=arch=compute_61,code=sm_61',
    '-gencode=arch=compute_70,code=sm_70',
]

setup(
    name='upsnet_operators',
    ext_modules=[
        CUDAExtension(
            name='roi_align_cuda',
            sources=['src/roi_align_cuda.cpp', 'src/roi_align_kernel.cu'],
            extra_compile_args={'cxx': ['-g'], 'nvcc': nvcc_flags},
        ),
        CUDAExtension(
            name='deform_conv_cuda',
            sources=['src/deform_conv_cuda.cpp', 'src/deform_conv_cuda_kernel.cu'],
            extra_compile_args={'cxx': ['-g'], 'nvcc': nvcc_flags},
        ),
        CUDAExtension(
            name='nms_cuda',
            sources=['src/nms_cuda.cpp', 'src/nms_kernel.cu'],
            extra_compile_args={'cxx': ['-g'], 'nvcc': nvcc_flags},
        ),
    ],
    cmdclass={'build_ext': BuildExtension},
)
