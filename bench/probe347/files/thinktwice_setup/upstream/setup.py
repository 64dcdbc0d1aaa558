"""Build script for the ThinkTwice team_code package.

The BEV encoder lifts camera features with a Lift-Splat-Shoot style depth distribution and
sums them into BEV cells with a custom voxel-pooling CUDA kernel (adapted from BEVDepth).
Build in place before training or evaluation:

    python setup.py develop
"""
import os

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension


def make_cuda_ext(name,
                  module,
                  sources,
                  sources_cuda=[],
                  extra_args=[],
                  extra_include_path=[]):

    define_macros = []
    extra_compile_args = {'cxx': [] + extra_args}

    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('WITH_CUDA', None)]
        extension = CUDAExtension
        extra_compile_args['nvcc'] = extra_args + [
            '-D__CUDA_NO_HALF_OPERATORS__',
            '-D__CUDA_NO_HALF_CONVERSIONS__',
            '-D__CUDA_NO_HALF2_OPERATORS__',
        ]
        sources += sources_cuda
    else:
        print('Compiling {} without CUDA'.format(name))
        extension = CppExtension
        # raise EnvironmentError('CUDA is required to compile ThinkTwice ops!')

    return extension(
        name='{}.{}'.format(module, name),
        sources=[os.path.join(*module.split('.'), p) for p in sources],
        include_dirs=extra_include_path,
        define_macros=define_macros,
        extra_compile_args=extra_compile_args,
    )


def get_requirements(path='requirements.txt'):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith(('#', '-'))]


if __name__ == '__main__':
    setup(
        name='thinktwice_team_code',
        version='0.1.0',
        author='OpenDriveLab',
        description='ThinkTwice: coarse-to-fine decoder for end-to-end driving in CARLA',
        long_description=open('README.md').read() if os.path.exists('README.md') else '',
        long_description_content_type='text/markdown',
        packages=find_packages(exclude=('tools', 'leaderboard', 'scenario_runner')),
        python_requires='>=3.7',
        install_requires=get_requirements(),
        ext_modules=[
            make_cuda_ext(
                name='voxel_pooling_ext',
                module='team_code.ops.voxel_pooling',
                sources=['src/voxel_pooling_forward.cpp'],
                sources_cuda=['src/voxel_pooling_forward_cuda.cu']),
        ],
        cmdclass={'build_ext': BuildExtension},
        zip_safe=False,
    )
