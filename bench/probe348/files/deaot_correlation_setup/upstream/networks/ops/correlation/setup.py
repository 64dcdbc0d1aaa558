"""Build the local-correlation op used by the short-term (local) propagation.

Vendored from ClementPinard/Pytorch-Correlation-extension (v0.4.0) so that the
op is compiled against the exact torch/CUDA of this environment:

    cd networks/ops/correlation && python setup.py build_ext --inplace

Requires nvcc matching torch.version.cuda. Building takes ~2 minutes.
"""
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))

cxx_args = ['-std=c++17', '-O3', '-fopenmp']

nvcc_args = [
    '-O3',
    '--use_fast_math',
    '-gencode', 'arch=compute_70,code=sm_70',
    '-gencode', 'arch=compute_75,code=sm_75',
    '-gencode', 'arch=compute_80,code=sm_80',
    '-gencode', 'arch=compute_86,code=sm_86',
    '-gencode', 'arch=compute_86,code=compute_86',
]

# allow a quick single-arch build on dev boxes: TORCH_CUDA_ARCH_LIST="8.6" python setup.py ...
if os.environ.get('TORCH_CUDA_ARCH_LIST'):
    nvcc_args = ['-O3', '--use_fast_math']

setup(
    name='spatial_correlation_sampler',
    version='0.4.0+vos',
    author='Clement Pinard (vendored)',
    description='Correlation module for pytorch (local attention in AOT/DeAOT)',
    py_modules=['spatial_correlation_sampler'],
    ext_modules=[
        CUDAExtension('spatial_correlation_sampler_backend', [
            os.path.join(this_dir, 'csrc', 'correlation.cpp'),
            os.path.join(this_dir, 'csrc', 'correlation_sampler.cpp'),
            os.path.join(this_dir, 'csrc', 'correlation_cuda_kernel.cu'),
        ], extra_compile_args={'cxx': cxx_args, 'nvcc': nvcc_args},
           extra_link_args=['-lgomp'])
    ],
    cmdclass={'build_ext': BuildExtension},
    install_requires=['torch>=1.7', 'numpy'],
)
