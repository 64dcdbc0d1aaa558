"""
Copyright 2019, ETH Zurich

This file is part of L3C-PyTorch.

L3C-PyTorch is free software: you can redistribute it and/or modify
it under the terms of the GNU General Public License as published by
the Free Software Foundation, either version 3 of the License, or
any later version.

--------------------------------------------------------------------------------

NOTE: Needs PyTorch 1.0 or newer, as the C++ code relies on that API!

Depending on the environment variable COMPILE_CUDA, compiles the torchac_backend with or
without support for CUDA, into a module called torchac_backend_gpu or torchac_backend_cpu.

COMPILE_CUDA = auto is default, and will compile for CUDA if nvcc is found.

"""

import os
import subprocess

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension


MODULE_BASE_NAME = 'torchac_backend'


def prefixed(prefix, l):
    ps = [os.path.join(prefix, el) for el in l]
    for p in ps:
        if not os.path.isfile(p):
            raise FileNotFoundError(p)
    return ps


def compile_ext(cuda_support):
    print('Compiling, cuda_support={}'.format(cuda_support))
    ext_module = get_extension(cuda_support)

    setup(name=ext_module.name,
          version='1.0.0',
          ext_modules=[ext_module],
          extra_compile_args=['-mmacosx-version-min=10.9'],
          cmdclass={'build_ext': BuildExtension})


def get_extension(cuda_support):
    # dir of this file
    setup_dir = os.path.dirname(os.path.realpath(__file__))
    # Where the cpp and cu files are
    prefix = os.path.join(setup_dir, MODULE_BASE_NAME)
    if not os.path.isdir(prefix):
        raise ValueError('Did not find backend foler: {}'.format(prefix))
    if cuda_support:
        nvcc_avaible, nvcc_version = supported_nvcc_available()
        if not nvcc_avaible:
            print(_bold_warn_str('***WARN') + ': Found untested nvcc {}'.format(nvcc_version))

        return CUDAExtension(
            MODULE_BASE_NAME + '_gpu',
            prefixed(prefix, ['torchac.cpp', 'torchac_kernel.cu']),
            define_macros=[('COMPILE_CUDA', '1')])
    else:
        return CppExtension(
            MODULE_BASE_NAME + '_cpu',
            prefixed(prefix, ['torchac.cpp']))


# TODO:
# Add further supported version as specified in readme


def supported_nvcc_available():
    """ :return: tuple (bool, str) """
    try:
        nvcc_ver = subprocess.check_output(['nvcc', '--version']).decode()
    except (FileNotFoundError, subprocess.CalledProcessError):
        return False, None
    if 'release 9.0' in nvcc_ver or 'release 10.0' in nvcc_ver or 'release 10.1' in nvcc_ver:
        return True, nvcc_ver
    return False, nvcc_ver


def _bold_warn_str(s):
    return '\x1b[91m\x1b[1m' + s + '\x1b[0m'


def _assert_torch_version_sufficient():
    import torch
    if torch.__version__.strip() >= '1.0':
        return
    print(_bold_warn_str('Error:'), 'Need PyTorch version >= 1.0, found {}'.format(torch.__version__))
    raise ValueError('Need PyTorch version >= 1.0')


if __name__ == '__main__':
    _assert_torch_version_sufficient()
    cuda_flag = os.environ.get('COMPILE_CUDA', 'auto')
    if cuda_flag == 'auto':
        cuda_support = supported_nvcc_available()[0]
        print('Found CUDA support: {}'.format(cuda_support))
    elif cuda_flag == 'force':
        cuda_support = True
    elif cuda_flag in ('0', 'no', 'false'):
        cuda_support = False
    else:
        raise ValueError('COMPILE_CUDA must be auto, force or no, got {}'.format(cuda_flag))
    compile_ext(cuda_support)
