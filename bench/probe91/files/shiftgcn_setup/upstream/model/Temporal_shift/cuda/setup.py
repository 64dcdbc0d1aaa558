"""Build the adaptive temporal shift op used by Shift-GCN.

    cd model/Temporal_shift/cuda && python setup.py install

The extension is imported as ``shift_cuda_linear_cpp`` by ``shift.py``.
"""
import os
import subprocess
import sys

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

HERE = os.path.dirname(os.path.abspath(__file__))


def _nvcc_version():
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, 'bin', 'nvcc'), '-V'])
    except (OSError, subprocess.CalledProcessError):
        return 'unknown'
    return out.decode().strip().split('\n')[-1]


def _check_toolchain():
    if CUDA_HOME is None:
        sys.exit('CUDA_HOME is not set: the shift op has no CPU implementation, '
                 'install the CUDA toolkit matching torch.version.cuda ({}).'.format(torch.version.cuda))
    print('building shift_cuda_linear_cpp with', _nvcc_version())


def _arch_flags():
    # Default to the archs the authors trained on (1080Ti / V100 / 2080Ti / A100);
    # override with TORCH_CUDA_ARCH_LIST for newer cards.
    os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '6.1;7.0;7.5;8.0')
    return []


def get_extensions():
    _check_toolchain()
    extra_compile_args = {
        'cxx': ['-O3', '-std=c++14'],
        'nvcc': [
            '-O3',
            '-DCUDA_HAS_FP16=1',
            '-D__CUDA_NO_HALF_OPERATORS__',
            '-D__CUDA_NO_HALF_CONVERSIONS__',
            '-D__CUDA_NO_HALF2_OPERATORS__',
        ] + _arch_flags(),
    }
    return [
        CUDAExtension(
            name='shift_cuda_linear_cpp',
            sources=[
                os.path.join(HERE, 'shift_cuda.cpp'),
                os.path.join(HERE, 'shift_cuda_kernel.cu'),
            ],
            extra_compile_args=extra_compile_args,
        )
    ]


setup(
    name='shift_cuda_linear_cpp',
    version='0.1',
    description='Adaptive temporal shift operator (CUDA) for Shift-GCN',
    ext_modules=get_extensions(),
    cmdclass={'build_ext': BuildExtension},
    zip_safe=False,
)
