#!/usr/bin/env python
# -*- coding: utf-8 -*-
# @Filename:    setup.py
# @Project:     GuideNet
#
# Build the guided (content-dependent, spatially-variant) local convolution:
#     cd exts && python setup.py install
# Requires nvcc matching the CUDA version PyTorch was built with.

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='GuideConv',
    version='0.1',
    ext_modules=[
        CUDAExtension('GuideConv', [
            'guideconv.cpp',
            'guideconv_kernel.cu',
        ],
            extra_compile_args={'cxx': ['-O3'],
                                'nvcc': ['-O3', '--use_fast_math']}),
    ],
    cmdclass={
        'build_ext': BuildExtension
    })
