# Copyright (c) Facebook, Inc. and its affiliates.
# 
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
import glob
import os

_ext_src_root = "_ext_src"
_ext_sources = glob.glob("{}/src/*.cpp".format(_ext_src_root)) + glob.glob(
    "{}/src/*.cu".format(_ext_src_root)
)
_ext_headers = glob.glob("{}/include/*".format(_ext_src_root))

headers = "-I" + os.path.join(os.path.dirname(os.path.abspath(__file__)), '_ext_src', 'include')

# Build for the usual data-centre and consumer cards; override by exporting
# TORCH_CUDA_ARCH_LIST before running `python setup.py install`.
os.environ["TORCH_CUDA_ARCH_LIST"] = os.environ.get(
    "TORCH_CUDA_ARCH_LIST", "3.7+PTX;5.0;6.0;6.1;6.2;7.0;7.5;8.0;8.6"
)

setup(
    name='pointnet2',
    ext_modules=[
        CUDAExtension(
            name='pointnet2._ext',
            sources=_ext_sources,
            extra_compile_args={
                "cxx": ["-O3", headers],
                "nvcc": ["-O3", "-Xfatbin", "-compress-all", headers],
            },
            include_dirs=[os.path.join(os.path.dirname(os.path.abspath(__file__)), '_ext_src', 'include')],
        )
    ],
    cmdclass={
        'build_ext': BuildExtension
    }
)
