#!/usr/bin/env python
"""Build / install torchsionna.

The LDPC belief-propagation kernel and the (de)mapper kernels are compiled
with nvcc when a CUDA toolkit is found.  Set FORCE_CUDA=1 to build them on a
machine without a visible GPU (e.g. inside `docker build`), and
TORCH_CUDA_ARCH_LIST to restrict the target architectures.
"""
import glob
import os
import re

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))


def get_version():
    with open(os.path.join(HERE, "torchsionna", "__init__.py")) as f:
        return re.search(r'__version__ = "(.*?)"', f.read()).group(1)


def get_extensions():
    extensions = []
    ldpc_dir = os.path.join("torchsionna", "fec", "ldpc", "csrc")
    mapping_dir = os.path.join("torchsionna", "mapping", "csrc")

    define_macros = []
    extra_compile_args = {"cxx": ["-O3", "-std=c++17"]}

    use_cuda = (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1"
    if use_cuda:
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-O3",
            "--use_fast_math",
            "-std=c++17",
            "-D__CUDA_NO_HALF_OPERATORS__",
            "-D__CUDA_NO_HALF_CONVERSIONS__",
            "--expt-relaxed-constexpr",
        ]
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;8.9;9.0")
        extensions.append(
            CUDAExtension(
                name="torchsionna._ldpc_cuda",
                sources=sorted(glob.glob(os.path.join(ldpc_dir, "*.cpp")) + glob.glob(os.path.join(ldpc_dir, "*.cu"))),
                define_macros=define_macros,
                extra_compile_args=extra_compile_args,
            )
        )
        extensions.append(
            CUDAExtension(
                name="torchsionna._mapping_cuda",
                sources=sorted(glob.glob(os.path.join(mapping_dir, "*.cpp")) + glob.glob(os.path.join(mapping_dir, "*.cu"))),
                define_macros=define_macros,
                extra_compile_args=extra_compile_args,
            )
        )
    else:
        print("torchsionna: CUDA not found -- building CPU-only helpers, GPU kernels disabled")
        extensions.append(
            CppExtension(
                name="torchsionna._mapping_cpu",
                sources=sorted(glob.glob(os.path.join(mapping_dir, "*_cpu.cpp"))),
                extra_compile_args={"cxx": ["-O3", "-std=c++17", "-fopenmp"]},
                extra_link_args=["-fopenmp"],
            )
        )
    return extensions


with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="torchsionna",
    version=get_version(),
    description="PyTorch port of NVIDIA Sionna link-level simulation components",
    long_description=long_description,
    long_description_content_type="text/markdown",
    author="torchsionna contributors",
    license="Apache-2.0",
    python_requires=">=3.8",
    packages=find_packages(exclude=("tests", "examples", "notebooks")),
    install_requires=[
        "torch>=1.13",
        "numpy>=1.21",
        "scipy>=1.7",
        "matplotlib",
    ],
    extras_require={
        "cuda": ["cupy-cuda11x>=12.0", "nvidia-ml-py>=11.5"],
        "dev": ["pytest", "pytest-benchmark", "black", "flake8"],
    },
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)},
    zip_safe=False,
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 11.8",
        "Topic :: Scientific/Engineering",
    ],
)
