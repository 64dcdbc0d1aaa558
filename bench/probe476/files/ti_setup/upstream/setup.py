import os
import glob
from setuptools import setup, find_packages

import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# ----------------------------------------------------------------------------
# Build configuration
# ----------------------------------------------------------------------------
# Default compute capability; overridden by the card found at build time
compute_arch = 'compute_61'

# Set to True to compile the layers in double precision (slower, used by the
# gradient checks in tests/)
use_double_precision = False

# Number of threads per CUDA block for the im2col-style kernels
cuda_num_threads = 1024
# ----------------------------------------------------------------------------

if torch.cuda.is_available():
    major, minor = torch.cuda.get_device_capability()
    compute_arch = 'compute_{}{}'.format(major, minor)

cxx_args = ['-fopenmp', '-O3', '-std=c++14']
nvcc_args = ['-arch=' + compute_arch, '--expt-relaxed-constexpr', '-O3', '-DCUDA_NUM_THREADS={}'.format(cuda_num_threads)]
if use_double_precision:
    cxx_args.append('-DDOUBLE_PRECISION')
    nvcc_args.append('-DDOUBLE_PRECISION')

here = os.path.dirname(os.path.abspath(__file__))
include_dirs = [os.path.join(here, 'src', 'include')]

cpp_sources = sorted(glob.glob(os.path.join('src', 'cpp', '*.cpp')))
cuda_sources = sorted(glob.glob(os.path.join('src', 'cuda', '*.cu')))

print('Building mapped convolution layers for {} (double precision: {})'.format(
    compute_arch, use_double_precision))

setup(
    name='mapped_convolution',
    version='0.2.0',
    author='Marc Eder',
    description='Mapped convolutions and tangent-image utilities for spherical images',
    packages=find_packages(exclude=('tests', 'examples')),
    ext_modules=[
        CUDAExtension(
            name='_mapped_convolution_ext',
            sources=cpp_sources + cuda_sources,
            include_dirs=include_dirs,
            define_macros=[('WITH_CUDA', None)],
            extra_compile_args={'cxx': cxx_args, 'nvcc': nvcc_args}),
    ],
    cmdclass={'build_ext': BuildExtension},
    install_requires=['numpy', 'scipy', 'visdom', 'plyfile'],
)
