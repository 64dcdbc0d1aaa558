#!/usr/bin/env python
"""Build the DCNv2 extension (deformable convolution v2 + deformable PS-RoI pooling).

    python setup.py build develop

The CUDA kernels live in src/cuda/*.cu, the CPU fallbacks in src/cpu/*.cpp.
Set FORCE_CUDA=1 to build the CUDA kernels on a machine without a visible GPU
(e.g. inside `docker build`).
"""
import glob
import io
import os
import re

import torch
from setuptools import find_packages
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME
from torch.utils.cpp_extension import CppExtension
from torch.utils.cpp_extension import CUDAExtension

requirements = ["torch", "torchvision"]

# Pascal, Volta and Turing by default; override with TORCH_CUDA_ARCH_LIST=...
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.0;6.1;7.0;7.5")


def read_version():
    here = os.path.dirname(os.path.abspath(__file__))
    with io.open(os.path.join(here, "DCNv2", "__init__.py"), encoding="utf-8") as f:
        match = re.search(r'^__version__ = [\'"]([^\'"]*)[\'"]', f.read(), re.M)
    return match.group(1) if match else "0.1"


def get_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    extensions_dir = os.path.join(this_dir, "src")

    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(extensions_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    os.environ["CC"] = "g++"
    sources = main_file + source_cpu
    extension = CppExtension
    extra_compile_args = {"cxx": ["-O3", "-std=c++14"]}
    define_macros = []

    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
        sources += source_cuda
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-DCUDA_HAS_FP16=1",
            "-D__CUDA_NO_HALF_OPERATORS__",
            "-D__CUDA_NO_HALF_CONVERSIONS__",
            "-D__CUDA_NO_HALF2_OPERATORS__",
        ]
    else:
        print("CUDA is not available: building the CPU implementation only")

    sources = [os.path.join(extensions_dir, s) for s in sources]
    include_dirs = [extensions_dir]
    ext_modules = [
        extension(
            "_ext",
            sources,
            include_dirs=include_dirs,
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]
    return ext_modules


setup(
    name="DCNv2",
    version=read_version(),
    author="charlesshang",
    url="https://github.com/charlesshang/DCNv2",
    description="deformable convolutional networks",
    packages=find_packages(exclude=("configs", "tests")),
    install_requires=requirements,
    ext_modules=get_extensions(),
    cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension},
)
