# --------------------------------------------------------
# Pose.gluon / Animal Kingdom pose baseline
# Copyright (c) 2017 Microsoft
# Licensed under The MIT License [see LICENSE for details]
# Adapted from py-faster-rcnn (Ross Girshick) for the HRNet keypoint code base
# --------------------------------------------------------
"""Builds the NMS extensions used by the bottom-up / detection code paths.

    cd lib/nms && python setup_linux.py build_ext --inplace

Two extensions are produced:
  * cpu_nms  - Cython NMS on numpy arrays
  * gpu_nms  - Cython wrapper around a CUDA kernel (nms_kernel.cu), compiled
               with nvcc; needs CUDA_HOME / nvcc on the PATH
"""
import os
from os.path import join as pjoin

import numpy as np
from Cython.Distutils import build_ext
from setuptools import Extension, setup


def find_in_path(name, path):
    """Return the absolute path of `name` in a pathsep-separated search path"""
    for directory in path.split(os.pathsep):
        candidate = pjoin(directory, name)
        if os.path.exists(candidate):
            return os.path.abspath(candidate)
    return None


def locate_cuda():
    """Find the CUDA toolkit.

    Returns a dict with the keys 'home', 'nvcc', 'include' and 'lib64'. The
    CUDA_HOME (or legacy CUDAHOME) environment variable wins; otherwise nvcc is
    searched on the PATH and in /usr/local/cuda/bin.
    """
    home = os.environ.get('CUDA_HOME') or os.environ.get('CUDAHOME')
    if home:
        nvcc = pjoin(home, 'bin', 'nvcc')
    else:
        default_path = pjoin(os.sep, 'usr', 'local', 'cuda', 'bin')
        nvcc = find_in_path('nvcc', os.environ['PATH'] + os.pathsep + default_path)
        if nvcc is None:
            raise EnvironmentError(
                'The nvcc binary could not be located in your $PATH. '
                'Either add it to your path, or set $CUDA_HOME')
        home = os.path.dirname(os.path.dirname(nvcc))

    cudaconfig = {
        'home': home,
        'nvcc': nvcc,
        'include': pjoin(home, 'include'),
        'lib64': pjoin(home, 'lib64'),
    }
    for key, value in cudaconfig.items():
        if not os.path.exists(value):
            raise EnvironmentError(
                'The CUDA {} path could not be located in {}'.format(key, value))
    return cudaconfig


CUDA = locate_cuda()

# numpy headers, needed by both Cython modules
try:
    numpy_include = np.get_include()
except AttributeError:
    numpy_include = np.get_numpy_include()

# compute capabilities of the cards in the lab (P100, V100, RTX 3090, A100)
CUDA_ARCH_FLAGS = [
    '-gencode=arch=compute_60,code=sm_60',
    '-gencode=arch=compute_70,code=sm_70',
    '-gencode=arch=compute_80,code=sm_80',
    '-gencode=arch=compute_86,code=sm_86',
]


def customize_compiler_for_nvcc(compiler):
    """Teach the distutils compiler to send .cu files to nvcc.

    distutils picks one compiler executable for every source file of an
    extension; we wrap `_compile` so that .cu sources are compiled with nvcc
    (and the 'nvcc' list of extra_compile_args), everything else with gcc.
    """
    compiler.src_extensions.append('.cu')
    default_compiler_so = compiler.compiler_so
    original_compile = compiler._compile

    def _compile(obj, src, ext, cc_args, extra_postargs, pp_opts):
        if os.path.splitext(src)[1] == '.cu':
            compiler.set_executable('compiler_so', CUDA['nvcc'])
            postargs = extra_postargs['nvcc']
        else:
            postargs = extra_postargs['gcc']
        original_compile(obj, src, ext, cc_args, postargs, pp_opts)
        # put gcc back for the next source file
        compiler.compiler_so = default_compiler_so

    compiler._compile = _compile


class custom_build_ext(build_ext):
    def build_extensions(self):
        customize_compiler_for_nvcc(self.compiler)
        build_ext.build_extensions(self)


ext_modules = [
    Extension(
        'cpu_nms',
        ['cpu_nms.pyx'],
        extra_compile_args={'gcc': ['-Wno-cpp', '-Wno-unused-function']},
        include_dirs=[numpy_include],
    ),
    Extension(
        'gpu_nms',
        ['nms_kernel.cu', 'gpu_nms.pyx'],
        library_dirs=[CUDA['lib64']],
        libraries=['cudart'],
        language='c++',
        runtime_library_dirs=[CUDA['lib64']],
        # per-compiler flags, dispatched by customize_compiler_for_nvcc above
        extra_compile_args={
            'gcc': ['-Wno-unused-function'],
            'nvcc': CUDA_ARCH_FLAGS + [
                '--ptxas-options=-v', '-c', '--compiler-options', "'-fPIC'"
            ],
        },
        include_dirs=[numpy_include, CUDA['include']],
    ),
]

setup(
    name='nms',
    ext_modules=ext_modules,
    # inject our custom trigger
    cmdclass={'build_ext': custom_build_ext},
)
