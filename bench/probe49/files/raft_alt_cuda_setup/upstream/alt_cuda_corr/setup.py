"""Build the memory-efficient correlation sampler used by RAFT's --alternate_corr.

    cd alt_cuda_corr && python setup.py install

The extension is optional: RAFT falls back to the all-pairs CorrBlock when it is
not installed, but the alternate implementation is what makes 1080p+ inference
fit on a 12GB card.
"""
import os
import sys
import glob

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

HERE = os.path.dirname(os.path.abspath(__file__))


def check_build_env():
    if CUDA_HOME is None:
        sys.exit("alt_cuda_corr: CUDA_HOME is not set; install the CUDA toolkit "
                 "matching torch.version.cuda (%s)" % torch.version.cuda)
    print("alt_cuda_corr: building against CUDA %s at %s" % (torch.version.cuda, CUDA_HOME))


def default_arch_list():
    # build for the card in this machine unless the user overrides it
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        os.environ["TORCH_CUDA_ARCH_LIST"] = "%d.%d" % (major, minor)
    else:
        os.environ["TORCH_CUDA_ARCH_LIST"] = "6.1;7.0;7.5;8.0;8.6+PTX"


def get_sources():
    sources = [os.path.join(HERE, 'correlation.cpp')]
    sources += sorted(glob.glob(os.path.join(HERE, '*_kernel.cu')))
    return sources


def get_extensions():
    check_build_env()
    default_arch_list()

    extra_compile_args = {
        'cxx': ['-O3', '-std=c++17'],
        'nvcc': ['-O3', '--use_fast_math', '-lineinfo'],
    }

    return [
        CUDAExtension('alt_cuda_corr',
            sources=get_sources(),
            extra_compile_args=extra_compile_args),
    ]


setup(
    name='correlation',
    version='0.1.0',
    description='RAFT alternate (on-the-fly) correlation sampler',
    ext_modules=get_extensions(),
    cmdclass={
        'build_ext': BuildExtension
    },
    zip_safe=False,
)
