#!/usr/bin/python
# -*- encoding: utf-8 -*-
"""
Build the fused OHEM label kernel used by lib/ohem_ce_loss.OhemCELossCpp.

    cd lib/ohem_cpp && python setup.py install

Needs nvcc from the same CUDA toolkit that pytorch was built with
(check with `python -c "import torch; print(torch.version.cuda)"`).
"""
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


this_dir = os.path.dirname(os.path.abspath(__file__))
csrc = os.path.join(this_dir, 'csrc')


setup(
    name='ohem_cpp',
    version='0.1.0',
    description='score based ohem label generation for semantic segmentation',
    ext_modules=[
        CUDAExtension('ohem_cpp', [
            os.path.join(csrc, 'ohem_label.cpp'),
            os.path.join(csrc, 'ohem_label_kernel.cu'),
        ],
        extra_compile_args={
            'cxx': ['-O2'],
            'nvcc': ['-O2', '--use_fast_math', '-gencode=arch=compute_70,code=sm_70', '-gencode=arch=compute_75,code=sm_75'],
        }),
    ],
    cmdclass={
        'build_ext': BuildExtension
    },
    zip_safe=False,
)
