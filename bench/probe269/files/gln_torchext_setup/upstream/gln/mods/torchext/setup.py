"""Build the jagged-softmax helpers used by the GLN template/reaction scorers.

    cd gln/mods/torchext && pip install -e .

The CPU extension is always built.  The CUDA extension is only built when a
GPU (and nvcc) is visible at install time; otherwise the CPU path is used.
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension
import torch

ext_modules = [
    CppExtension(
        'extlib',
        ['src/extlib.cpp'],
        extra_compile_args=['-fopenmp', '-O3'],
        extra_link_args=['-lgomp'],
    )
]

if torch.cuda.is_available() or os.environ.get('FORCE_CUDA', '0') == '1':
    ext_modules.append(
        CUDAExtension(
            'extlib_cuda',
            ['src/extlib_cuda.cpp', 'src/extlib_cuda_kernels.cu'],
            extra_compile_args={'cxx': ['-O3'],
                                'nvcc': ['-O3', '--expt-relaxed-constexpr',
                                         '-gencode=arch=compute_70,code=sm_70',
                                         '-gencode=arch=compute_80,code=sm_80']},
        )
    )

setup(
    name='torchext',
    version='0.1.0',
    description='jagged log-softmax kernels for GLN',
    ext_modules=ext_modules,
    cmdclass={
        'build_ext': BuildExtension
    })
