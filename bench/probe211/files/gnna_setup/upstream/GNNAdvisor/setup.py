"""Build the GNNAdvisor CUDA extension.

    cd GNNAdvisor && TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6" python setup.py install

The extension exposes forward/backward kernels for GCN and GIN aggregation
with neighbour-group partitioning (``build_part``) and a scatter-and-gather
(``SAG``) primitive.
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))

# Ampere by default; override with TORCH_CUDA_ARCH_LIST for other GPUs.
nvcc_flags = [
    '-O3',
    '--use_fast_math',
    '-lineinfo',
    '-gencode=arch=compute_80,code=sm_80',
]
if os.getenv('GNNA_DEBUG', '0') == '1':
    nvcc_flags = ['-G', '-g', '-O0']

setup(
    name='GNNAdvisor',
    version='0.1.0',
    description='GNNAdvisor: adaptive and efficient runtime for GNN on GPUs',
    ext_modules=[
        CUDAExtension(
            name='GNNAdvisor',
            sources=[
                os.path.join(here, 'GNNAdvisor.cpp'),
                os.path.join(here, 'GNNAdvisor_kernel.cu'),
            ],
            extra_compile_args={
                'cxx': ['-O3', '-fopenmp'],
                'nvcc': nvcc_flags,
            },
            extra_link_args=['-lgomp'],
        )
    ],
    cmdclass={
        'build_ext': BuildExtension
    },
    install_requires=['torch>=1.8.0'],
)
