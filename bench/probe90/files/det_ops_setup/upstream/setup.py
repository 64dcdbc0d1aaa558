#!/usr/bin/env python
"""
det_ops: fused post-processing kernels for the detection predictors
(batched NMS, box decoding + score threshold, multi-level RoIAlign).

    pip install -v .                       # builds det_ops._C with nvcc
    FORCE_CUDA=1 TORCH_CUDA_ARCH_LIST="7.5;8.0;8.6;8.9" pip wheel .   # CI wheels
"""
import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
VERSION = "0.6.2"

torch_ver = [int(x) for x in torch.__version__.split(".")[:2]]
assert torch_ver >= [1, 13], "det_ops requires PyTorch >= 1.13"


def git_sha():
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).decode().strip()
    except Exception:
        return "unknown"


def write_version_file():
    with open(os.path.join(ROOT, "det_ops", "version.py"), "w") as f:
        f.write(f'__version__ = "{VERSION}"\n')
        f.write(f'git_version = "{git_sha()}"\n')
        f.write(f'cuda = "{torch.version.cuda}"\n')


def get_extensions():
    this_dir = os.path.join(ROOT, "det_ops", "csrc")
    main_file = glob.glob(os.path.join(this_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(this_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(this_dir, "cuda", "*.cu"))

    sources = main_file + source_cpu
    extension = CppExtension
    extra_compile_args = {"cxx": ["-O3", "-std=c++17"]}
    define_macros = []

    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
        sources += source_cuda
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-O3",
            "--use_fast_math",
            "-std=c++17",
            "--expt-relaxed-constexpr",
            "--expt-extended-lambda",
            "-DCUDA_HAS_FP16=1",
            "-D__CUDA_NO_HALF_OPERATORS__",
            "-D__CUDA_NO_HALF_CONVERSIONS__",
            "-D__CUDA_NO_HALF2_OPERATORS__",
            "-lineinfo",
        ]
        if os.getenv("TORCH_CUDA_ARCH_LIST") is None:
            os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0;7.5;8.0;8.6;8.9;9.0"
    else:
        print("det_ops: CUDA not found, building the CPU-only extension", file=sys.stderr)

    include_dirs = [this_dir, os.path.join(this_dir, "cub")]

    return [
        extension(
            "det_ops._C",
            sorted(sources),
            include_dirs=include_dirs,
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]


if __name__ == "__main__":
    write_version_file()
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        long_description = fh.read()

    setup(
        name="det_ops",
        version=VERSION,
        author="vision-serving team",
        description="CUDA post-processing ops for detection model serving",
        long_description=long_description,
        long_description_content_type="text/markdown",
        packages=find_packages(exclude=("tests", "benchmarks")),
        python_requires=">=3.8",
        install_requires=[
            "torch>=1.13",
            "torchvision>=0.14",
            "numpy",
            "cupy-cuda12x>=12.0",
        ],
        extras_require={
            "serve": ["kserve>=0.11", "tritonclient[all]>=2.40", "pynvml>=11.5"],
            "test": ["pytest", "pytest-benchmark"],
        },
        ext_modules=get_extensions(),
        cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)},
        zip_safe=False,
        classifiers=[
            "Programming Language :: Python :: 3",
            "Environment :: GPU :: NVIDIA CUDA :: 12",
            "License :: OSI Approved :: Apache Software License",
        ],
    )
