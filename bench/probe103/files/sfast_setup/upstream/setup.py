#!/usr/bin/env python

import glob
import os
import platform
import subprocess

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import (CUDA_HOME, BuildExtension, CppExtension, CUDAExtension)

this_dir = os.path.dirname(os.path.abspath(__file__))


def fetch_requirements():
    with open("requirements.txt") as f:
        reqs = f.read().strip().split("\n")
    return reqs


def get_git_hash():
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=this_dir).decode("ascii").strip()
    except Exception:
        return "unknown"


def get_version():
    init_py_path = os.path.join(this_dir, "src", "sfast", "__init__.py")
    init_py = open(init_py_path, "r").readlines()
    version_line = [l.strip() for l in init_py if l.startswith("__version__")][0]
    version = version_line.split("=")[-1].strip().strip("'\"")

    # The following is used to build release packages.
    # Users should never use it.
    suffix = os.getenv("STABLE_FAST_VERSION_SUFFIX", "")
    version = version + suffix
    if os.getenv("BUILD_NIGHTLY", "0") == "1":
        from datetime import datetime
        date_str = datetime.today().strftime("%y%m%d")
        version = version + ".dev" + date_str

    # local version tag so wheels for different torch/CUDA combos don't collide on the release page
    version += "+torch" + torch.__version__.split("+")[0].replace(".", "")
    version += "cu" + torch.version.cuda.replace(".", "")
    return version


def get_extensions():
    extensions_dir = os.path.join(this_dir, "src", "sfast", "csrc")

    include_dirs = [extensions_dir]

    sources = glob.glob(os.path.join(extensions_dir, "**", "*.cpp"), recursive=True)
    # common code between cuda and rocm platforms, for hipify version [1,0,0] and later.
    source_cuda = glob.glob(os.path.join(extensions_dir, "**", "*.cu"), recursive=True)
    source_cuda_rt = glob.glob(os.path.join(extensions_dir, "**", "*.cc"), recursive=True)

    extension = CppExtension

    extra_compile_args = {"cxx": []}
    library_dirs = []
    libraries = []
    define_macros = []

    if platform.system() != "Windows":
        extra_compile_args["cxx"] += ["-O3", "-fvisibility=hidden"]

    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
        sources += source_cuda
        sources += source_cuda_rt

        define_macros += [("WITH_CUDA", None)]

        nvcc_flags_env = os.getenv("NVCC_FLAGS", "")
        if nvcc_flags_env != "":
            nvcc_flags = nvcc_flags_env.split(" ")
        else:
            nvcc_flags = []

        if torch.version.hip:
            nvcc_flags += ["-DUSE_ROCM"]
        else:
            nvcc_flags += [
                "--use_fast_math",
                "-U__CUDA_NO_HALF_OPERATORS__",
                "-U__CUDA_NO_HALF_CONVERSIONS__",
                "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
                "--extended-lambda",
                "-D_ENABLE_EXTENDED_ALIGNED_STORAGE",
                "-std=c++17",
                "--ptxas-options=-O2",
                "--ptxas-options=-allow-expensive-optimizations=true",
            ]
        if platform.system() == "Windows":
            nvcc_flags += ["-Xcompiler", "/std:c++17"]

        extra_compile_args["nvcc"] = nvcc_flags

        libraries += ["cublas", "cublasLt"]
        if platform.system() == "Windows":
            library_dirs += [os.path.join(CUDA_HOME, "lib", "x64")]

        # CUTLASS is vendored as a submodule; only its headers are used
        cutlass_root = os.path.join(this_dir, "third_party", "cutlass")
        include_dirs += [os.path.join(cutlass_root, "include"), os.path.join(cutlass_root, "tools", "util", "include")]
        if not os.path.isdir(os.path.join(cutlass_root, "include")):
            raise RuntimeError("third_party/cutlass is missing, run `git submodule update --init --recursive`")

    if platform.system() == "Windows":
        extra_compile_args["cxx"] += ["/MP", "/std:c++17"]
    else:
        extra_compile_args["cxx"] += ["-std=c++17"]

    ext_modules = [
        extension(
            "sfast._C",
            sorted(sources),
            include_dirs=[os.path.abspath(p) for p in include_dirs],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
            library_dirs=library_dirs,
            libraries=libraries,
        )
    ]

    return ext_modules


setup(
    name="stable-fast",
    version=get_version(),
    author="Cheng Zeyi",
    url="https://github.com/chengzeyi/stable-fast",
    description="Stable Fast is an ultra lightweight performance optimization framework"
    " for Hugging Face diffuser pipelines.",
    long_description=open(os.path.join(this_dir, "README.md"), encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    package_dir={"": "src"},
    packages=find_packages(where="src", exclude=("configs", "tests")),
    python_requires=">=3.8",
    install_requires=fetch_requirements(),
    extras_require={
        # optional dependencies, required by some features
        "all": [],
        "xformers": ["xformers>=0.0.22"],
        "triton": ["triton>=2.1.0"],
        "diffusers": ["diffusers>=0.19.0", "transformers", "accelerate"],
        # dev dependencies. Install them by `pip install 'stable-fast[dev]'`
        "dev": [
            "pytest",
            "pytest-benchmark",
            "opencv-python",
            "packaging",
            "pynvml",
        ],
    },
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
