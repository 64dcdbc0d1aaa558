#!/usr/bin/env python
# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved.
"""Build script for maskrcnn_benchmark (scene-graph fork).

The C++/CUDA sources under maskrcnn_benchmark/csrc are compiled into a single
extension module, ``maskrcnn_benchmark._C``.  When CUDA is detected (or
FORCE_CUDA=1 is exported, e.g. inside docker builds where no GPU is visible)
the kernels in csrc/cuda/*.cu are compiled with nvcc as well.
"""
import glob
import os
import sys

import torch
from setuptools import find_packages
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME
from torch.utils.cpp_extension import CppExtension
from torch.utils.cpp_extension import CUDAExtension

requirements = ["torch", "torchvision"]

TORCH_MAJOR = int(torch.__version__.split(".")[0])
TORCH_MINOR = int(torch.__version__.split(".")[1])

if (TORCH_MAJOR, TORCH_MINOR) < (1, 0):
    sys.exit("maskrcnn_benchmark requires PyTorch >= 1.0, found {}".format(torch.__version__))

# Build fat binaries for the cards we have in the lab (P100 / V100 / 2080Ti / A100)
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.0;7.0;7.5;8.0")


def get_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    extensions_dir = os.path.join(this_dir, "maskrcnn_benchmark", "csrc")

    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(extensions_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    sources = main_file + source_cpu
    extension = CppExtension

    extra_compile_args = {"cxx": []}
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
        print("** CUDA not found, building CPU-only maskrcnn_benchmark._C (nms/roi ops will be slow) **")

    sources = [os.path.join(extensions_dir, s) for s in sources]

    include_dirs = [extensions_dir]

    ext_modules = [
        extension(
            "maskrcnn_benchmark._C",
            sources,
            include_dirs=include_dirs,
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]

    return ext_modules


def get_version():
    version_file = os.path.join("maskrcnn_benchmark", "__init__.py")
    with open(version_file, "r") as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split("=")[1].strip().strip('"')
    return "0.1"


setup(
    name="maskrcnn_benchmark",
    version=get_version(),
    author="fmassa",
    url="https://github.com/facebookresearch/maskrcnn-benchmark",
    description="object detection in pytorch (with scene graph generation heads)",
    packages=find_packages(exclude=("configs", "tests",)),
    install_requires=requirements,
    ext_modules=get_extensions(),
    cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension},
)
