#!/usr/bin/env python3
"""Builds the three custom layers of flownet2-pytorch in one go:

    correlation_cuda   networks/correlation_package
    resample2d_cuda    networks/resample2d_package
    channelnorm_cuda   networks/channelnorm_package

    python3 setup.py install --user
"""
import os
import subprocess

import torch
from setuptools import setup, find_packages
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
NETWORKS = os.path.join(ROOT, 'networks')

cxx_args = ['-std=c++14', '-O2']

# Pascal .. Ampere; add your own with FLOWNET2_EXTRA_ARCHS="86 89"
CUDA_ARCHS = ['52', '60', '61', '70', '75', '80'] + os.environ.get('FLOWNET2_EXTRA_ARCHS', '').split()
nvcc_args = ['-gencode=arch=compute_{0},code=sm_{0}'.format(a) for a in CUDA_ARCHS]
nvcc_args += ['-gencode=arch=compute_80,code=compute_80', '--expt-relaxed-constexpr']


def nvcc_version():
    try:
        out = subprocess.check_output(['nvcc', '--version']).decode()
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.strip().splitlines()[-1]


def package(name, *sources):
    return [os.path.join(NETWORKS, name, s) for s in sources]


def make_extensions():
    print('torch {} / CUDA {} / nvcc: {}'.format(torch.__version__, torch.version.cuda, nvcc_version()))
    compile_args = {'cxx': cxx_args, 'nvcc': nvcc_args}
    return [
        CUDAExtension('correlation_cuda',
                      package('correlation_package', 'correlation_cuda.cc', 'correlation_cuda_kernel.cu'),
                      extra_compile_args=compile_args),
        CUDAExtension('resample2d_cuda',
                      package('resample2d_package', 'resample2d_cuda.cc', 'resample2d_kernel.cu'),
                      extra_compile_args=compile_args),
        CUDAExtension('channelnorm_cuda',
                      package('channelnorm_package', 'channelnorm_cuda.cc', 'channelnorm_kernel.cu'),
                      extra_compile_args=compile_args),
    ]


setup(
    name='flownet2_layers',
    version='0.2.0',
    author='flownet2-pytorch contributors',
    description='Correlation, Resample2d and ChannelNorm CUDA layers for FlowNet2',
    packages=find_packages(exclude=('tests', 'work')),
    ext_modules=make_extensions(),
    cmdclass={
        'build_ext': BuildExtension
    },
    install_requires=['torch>=1.4', 'numpy', 'scipy', 'tensorboardX', 'setproctitle', 'colorama', 'tqdm'],
)
