import os
import os.path as osp
import glob
import platform
import sys

from setuptools import setup, find_packages
import torch
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME

__version__ = '1.0.0'

# Set to 1 to force the CUDA extensions even when no GPU is visible at build time
# (e.g. building in a docker image on a CPU-only builder node).
FORCE_CUDA = int(os.getenv('FORCE_CUDA', '0'))
FORCE_ONLY_CUDA = int(os.getenv('FORCE_ONLY_CUDA', '0'))
FORCE_ONLY_CPU = int(os.getenv('FORCE_ONLY_CPU', '0'))

WITH_CUDA = False
if torch.cuda.is_available():
    WITH_CUDA = CUDA_HOME is not None
suffices = ['cpu', 'cuda'] if WITH_CUDA else ['cpu']
if FORCE_CUDA:
    suffices = ['cuda', 'cpu']
if FORCE_ONLY_CUDA:
    suffices = ['cuda']
if FORCE_ONLY_CPU:
    suffices = ['cpu']

BUILD_DOCS = os.getenv('BUILD_DOCS', '0') == '1'

# Ops that ship a .cpp (CPU) and a .cu (CUDA) implementation
extensions_dir = osp.join('extensions')
OPS = ['select_knn', 'oc', 'accumulate_knn', 'gravnet_knn']


def get_extensions():
    extensions = []

    for op in OPS:
        for suffix in suffices:
            define_macros = []
            extra_compile_args = {'cxx': ['-O3', '-std=c++17']}
            extra_link_args = ['-s']

            if suffix == 'cuda':
                define_macros += [('WITH_CUDA', None)]
                nvcc_flags = os.getenv('NVCC_FLAGS', '')
                nvcc_flags = [] if nvcc_flags == '' else nvcc_flags.split(' ')
                nvcc_flags += [
                    '-O3',
                    '--expt-relaxed-constexpr',
                    '--use_fast_math',
                    '-gencode=arch=compute_70,code=sm_70',
                    '-gencode=arch=compute_75,code=sm_75',
                    '-gencode=arch=compute_80,code=sm_80',
                    '-gencode=arch=compute_86,code=sm_86',
                ]
                extra_compile_args['nvcc'] = nvcc_flags

                sources = [
                    osp.join(extensions_dir, f'{op}_cuda.cpp'),
                    osp.join(extensions_dir, f'{op}_cuda_kernel.cu'),
                ]
                name = f'{op}_cuda'
                Extension = CUDAExtension
            else:
                sources = [osp.join(extensions_dir, f'{op}_cpu.cpp')]
                name = f'{op}_cpu'
                Extension = CppExtension

            if not all(osp.exists(s) for s in sources):
                print(f'Skipping {name}: sources missing')
                continue

            extension = Extension(
                f'torch_cmspepr.{name}',
                sources,
                include_dirs=[extensions_dir],
                define_macros=define_macros,
                extra_compile_args=extra_compile_args,
                extra_link_args=extra_link_args,
            )
            extensions += [extension]

    return extensions


install_requires = [
    'numpy',
    'scipy',
]

test_requires = [
    'pytest',
    'pytest-cov',
    'torch_geometric',
    'torch_cluster',
]

# work-around hipify abs paths
include_package_data = True
if torch.cuda.is_available() and torch.version.hip:
    include_package_data = False

setup(
    name='torch_cmspepr',
    version=__version__,
    description='PyTorch extensions for the CMS PEPR (particle-flow with object condensation) models: '
                'GPU k-nearest-neighbours, GravNet aggregation and the object condensation loss.',
    author='CMS PEPR developers',
    url='https://github.com/cms-pepr/pytorch_cmspepr',
    keywords=['pytorch', 'cuda', 'knn', 'object-condensation', 'gravnet', 'hgcal'],
    python_requires='>=3.8',
    install_requires=install_requires,
    extras_require={'test': test_requires},
    ext_modules=get_extensions() if not BUILD_DOCS else [],
    cmdclass={
        'build_ext': BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)
    },
    packages=find_packages(),
    include_package_data=include_package_data,
)
