#!/usr/bin/env python
"""
##################################################################################################
# Copyright Info :    Copyright (c) Davar Lab @ Hikvision Research Institute. All rights reserved.
# Filename       :    setup.py
# Abstract       :    Installation of davarocr (python package + optional C++/CUDA ops)
#
# Current Version:    1.0.0
# Date           :    2021-05-20
##################################################################################################
"""
import os
import subprocess
import time
from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import (BuildExtension, CppExtension,
                                       CUDAExtension)


def readme():
    with open('README.md', encoding='utf-8') as f:
        content = f.read()
    return content


version_file = 'davarocr/version.py'


def get_git_hash():

    def _minimal_ext_cmd(cmd):
        # construct minimal environment
        env = {}
        for k in ['SYSTEMROOT', 'PATH', 'HOME']:
            v = os.environ.get(k)
            if v is not None:
                env[k] = v
        # LANGUAGE is used on win32
        env['LANGUAGE'] = 'C'
        env['LANG'] = 'C'
        env['LC_ALL'] = 'C'
        out = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, env=env).communicate()[0]
        return out

    try:
        out = _minimal_ext_cmd(['git', 'rev-parse', 'HEAD'])
        sha = out.strip().decode('ascii')
    except OSError:
        sha = 'unknown'

    return sha


def get_version():
    with open(version_file, 'r') as f:
        exec(compile(f.read(), version_file, 'exec'))
    return locals()['__version__']


def make_cuda_ext(name, module, sources, sources_cuda=[]):
    """Build a C++ extension, adding the CUDA sources only when CUDA is usable.

    Ops that only have CUDA kernels (e.g. the spotting / rotated-RoI ops) are then missing at run
    time; the table-recognition models (LGPMA, CTUNet) do not use them.
    """
    define_macros = []
    extra_compile_args = {'cxx': []}

    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('WITH_CUDA', None)]
        extension = CUDAExtension
        extra_compile_args['nvcc'] = [
            '-D__CUDA_NO_HALF_OPERATORS__',
            '-D__CUDA_NO_HALF_CONVERSIONS__',
            '-D__CUDA_NO_HALF2_OPERATORS__',
        ]
        sources += sources_cuda
    else:
        print(f'Compiling {name} without CUDA')
        extension = CppExtension

    return extension(
        name=f'{module}.{name}',
        sources=[os.path.join(*module.split('.'), p) for p in sources],
        define_macros=define_macros,
        extra_compile_args=extra_compile_args)


def parse_requirements(fname='requirements.txt'):
    """Parse the package dependencies listed in a requirements file, one per line, skipping
    comments and blank lines."""
    require_fpath = fname
    if not os.path.exists(require_fpath):
        return []
    packages = []
    with open(require_fpath, 'r') as f:
        for line in f.readlines():
            line = line.strip()
            if line and not line.startswith('#'):
                packages.append(line)
    return packages


if __name__ == '__main__':
    setup(
        name='davarocr',
        version=get_version(),
        description='Davar-Lab OCR toolbox',
        long_description=readme(),
        long_description_content_type='text/markdown',
        author='Davar Lab @ Hikvision Research Institute',
        keywords='computer vision, OCR, text spotting, table recognition',
        url='https://github.com/hikopensource/DAVAR-Lab-OCR',
        packages=find_packages(exclude=('configs', 'tools', 'demo')),
        include_package_data=True,
        classifiers=[
            'Development Status :: 4 - Beta',
            'License :: OSI Approved :: Apache Software License',
            'Operating System :: OS Independent',
            'Programming Language :: Python :: 3',
            'Programming Language :: Python :: 3.6',
            'Programming Language :: Python :: 3.7',
        ],
        license='Apache License 2.0',
        setup_requires=['pytest-runner'],
        tests_require=['pytest'],
        install_requires=parse_requirements('requirements.txt'),
        ext_modules=[
            make_cuda_ext(
                name='bezier_align_ext',
                module='davarocr.davar_spotting.core.bbox.bezier',
                sources=['src/bezier_align.cpp', 'src/cpu/bezier_align_cpu.cpp'],
                sources_cuda=['src/cuda/bezier_align_cuda.cu']),
            make_cuda_ext(
                name='compute_flow_ext',
                module='davarocr.davar_videotext.core.flow',
                sources=['src/compute_flow.cpp'],
                sources_cuda=['src/compute_flow_kernel.cu']),
            make_cuda_ext(
                name='rotated_roi_align_ext',
                module='davarocr.davar_common.core.bbox.rotated',
                sources=['src/rotated_roi_align.cpp'],
                sources_cuda=['src/rotated_roi_align_kernel.cu']),
        ],
        cmdclass={'build_ext': BuildExtension},
        zip_safe=False)
