# Build the normalized self-attention (NS) block kernels:
#     cd lib/module/PNS && python setup.py build develop
# Requires nvcc matching the CUDA version torch was built with (tested: CUDA 10.1 / 10.2, gcc 7).
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))

# Compile for the architectures of the cards we used (1080Ti, Titan RTX, V100); override with
# TORCH_CUDA_ARCH_LIST="8.6" for Ampere.
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.1;7.0;7.5")

setup(
    name='self_cuda',
    version='0.1',
    description='Relevance measuring / spatial-temporal aggregation kernels for PNS-Net',
    ext_modules=[
        CUDAExtension(
            name='self_cuda_backend',
            sources=[
                os.path.join(this_dir, 'src', 'self_cuda.cpp'),
                os.path.join(this_dir, 'src', 'self_cuda_kernel.cu'),
            ],
            extra_compile_args={
                'cxx': ['-O3'],
                'nvcc': ['-O3', '--use_fast_math', '-lineinfo'],
            },
        ),
    ],
    cmdclass={
        'build_ext': BuildExtension
    },
)
