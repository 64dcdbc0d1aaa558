"""Build the optional fused temporal-shift kernel used by ops/temporal_shift.py.

    cd ops/cuda_shift && python setup.py install

Requires nvcc matching the CUDA version PyTorch was built with.
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# Volta / Turing / Ampere; override with TORCH_CUDA_ARCH_LIST if needed.
os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '7.0;7.5;8.0')

setup(
    name='tsm_shift_cuda',
    version='0.1',
    description='Fused temporal shift (forward/backward) for TSM',
    ext_modules=[
        CUDAExtension(
            name='tsm_shift_cuda',
            sources=[
                'shift_cuda.cpp',
                'shift_cuda_kernel.cu',
            ],
            extra_compile_args={
                'cxx': ['-O3'],
                'nvcc': ['-O3', '--use_fast_math', '-lineinfo'],
            }),
    ],
    cmdclass={
        'build_ext': BuildExtension
    })
