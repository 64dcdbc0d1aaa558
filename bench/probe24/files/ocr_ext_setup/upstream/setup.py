#!/usr/bin/env python
"""Build the native helpers used by the OCR service.

* ``docai._pse``      -- progressive scale expansion (PSENet post-processing), C++ only
* ``docai._ctc_beam`` -- CTC prefix beam search with an n-gram LM, CUDA kernels
* ``docai._dcn``      -- modulated deformable conv v2 for the DBNet detector, CUDA kernels
"""
import glob
import os

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import (CUDA_HOME, BuildExtension, CppExtension,
                                       CUDAExtension)

ROOT = os.path.dirname(os.path.abspath(__file__))
VERSION = "0.7.2"


def get_extensions():
    extensions = []

    # CPU extension: always built
    extensions.append(
        CppExtension(
            name="docai._pse",
            sources=["csrc/pse/pse.cpp"],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"]},
        ))

    force_cuda = os.getenv("FORCE_CUDA", "0") == "1"
    if (torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda:
        define_macros = [("WITH_CUDA", None)]
        nvcc_args = [
            "-O3",
            "--use_fast_math",
            "-D__CUDA_NO_HALF_OPERATORS__",
            "-D__CUDA_NO_HALF_CONVERSIONS__",
            "-D__CUDA_NO_HALF2_OPERATORS__",
            "-gencode=arch=compute_80,code=sm_80",
            "-gencode=arch=compute_86,code=sm_86",
        ]
        extensions.append(
            CUDAExtension(
                name="docai._ctc_beam",
                sources=glob.glob("csrc/ctc_beam/*.cpp") + glob.glob("csrc/ctc_beam/*.cu"),
                include_dirs=[os.path.join(ROOT, "csrc", "ctc_beam", "include")],
                define_macros=define_macros,
                extra_compile_args={"cxx": ["-O3"], "nvcc": nvcc_args},
            ))
        extensions.append(
            CUDAExtension(
                name="docai._dcn",
                sources=[
                    "csrc/dcn/dcn_v2.cpp",
                    "csrc/dcn/dcn_v2_cuda.cu",
                    "csrc/dcn/dcn_v2_im2col_cuda.cu",
                ],
                define_macros=define_macros,
                extra_compile_args={"cxx": ["-O3"], "nvcc": nvcc_args},
            ))
    else:
        print("CUDA not found: building only the CPU extensions (no beam search / DCN kernels)")
    return extensions


with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="docai-native",
    version=VERSION,
    description="Native post-processing and CUDA ops for the docai OCR service",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("tests", "csrc")),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    python_requires=">=3.9",
    install_requires=[
        "torch>=2.1,<2.2",
        "numpy<2",
        "pyclipper",
        "nvidia-cuda-runtime-cu12",
    ],
    extras_require={
        "gpu": ["cupy-cuda12x>=12", "pynvml"],
        "dev": ["pytest", "ninja"],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
        "License :: OSI Approved :: Apache Software License",
    ],
    zip_safe=False,
)
