#!/usr/bin/env python3
"""Build the block_extractor CUDA op used by the local attention of GFLA / PISE.

    cd util/block_extractor && python setup.py install --user

The arch list below covers Pascal .. Ampere; add sm_89/sm_90 for newer cards.
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

cxx_args = ['-std=c++14']

nvcc_args = [
    '-gencode', 'arch=compute_60,code=sm_60',
    '-gencode', 'arch=compute_61,code=sm_61',
    '-gencode', 'arch=compute_70,code=sm_70',
    '-gencode', 'arch=compute_75,code=sm_75',
    '-gencode', 'arch=compute_80,code=sm_80',
    '-gencode', 'arch=compute_86,code=sm_86',
    '-gencode', 'arch=compute_86,code=compute_86',
]

if os.environ.get('BLOCK_EXTRACTOR_DEBUG', '0') == '1':
    nvcc_args += ['-G', '-lineinfo']

setup(
    name='block_extractor_cuda',
    version='0.1.0',
    description='Block extractor op for Global-Flow-Local-Attention',
    ext_modules=[
        CUDAExtension('block_extractor_cuda', [
            'block_extractor_cuda.cc',
            'block_extractor_kernel.cu'
        ], extra_compile_args={'cxx': cxx_args, 'nvcc': nvcc_args})
    ],
    cmdclass={
        'build_ext': BuildExtension
    })
