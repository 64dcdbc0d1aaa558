#!/usr/bin/env python
# Build script for stable-fast's C++/CUDA extension (sfast._C).
#
#   pip install -v -e .            # builds with CUDA if nvcc is found
#   WITH_CUDA=0 pip install -e .   # CPU-only build (JIT tracing helpers only)

import glob
import os
import subprocess

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

torch_ver = [int(x) for x in torch.__version__.split(".")[:2]]
assert torch_ver >= [1, 12], "Requires PyTorch >= 1.12"


def get_version():
    init_py_path = os.path.join(os.path.abspath(os.path.dirname(__file__)), "src", "sfast", "__init__.py")
    init_py = open(init_py_path, "r").readlines()
    version_line = [l.strip() for l in init_py if l.startswith("__version__")][0]
    version = version_line.split("=")[-1].strip().strip("'\"")

    suffix = os.getenv("SFAST_VERSION_SUFFIX", "")
    version = version + suffix
    if os.getenv("BUILD_NIGHTLY", "0") == "1":
        from datetime import datetime

        date_str = datetime.today().strftime("%y%m%d")
        version = version + ".dev" + date_str

    return version


def get_cuda_version():
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"]).decode()
        return out.strip().split("release ")[-1].split(",")[0]
    except Exception:
        return None


def get_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    extensions_dir = os.path.join(this_dir, "src", "sfast", "csrc")

    main_source = os.path.join(extensions_dir, "sfast.cpp")
    sources = glob.glob(os.path.join(extensions_dir, "**", "*.cpp"), recursive=True)
    source_cuda = glob.glob(os.path.join(extensions_dir, "**", "*.cu"), recursive=True)
    sources = [main_source] + [s for s in sources if s != main_source]

    extension = CppExtension
    extra_compile_args = {"cxx": ["-O3"]}
    define_macros = []
    library_dirs = []
    libraries = []

    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
        sources += source_cuda
        define_macros += [("WITH_CUDA", None)]
        nvcc_flags_env = os.getenv("NVCC_FLAGS", "")
        if nvcc_flags_env == "":
            nvcc_flags = []
        else:
            nvcc_flags = nvcc_flags_env.split(" ")
        nvcc_flags += [
            "--use_fast_math",
            "-U__CUDA_NO_HALF_OPERATORS__",
            "-U__CUDA_NO_HALF_CONVERSIONS__",
            "-U__CUDA_NO_HALF2_OPERATORS__",
            "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
            "--expt-relaxed-constexpr",
            "--expt-extended-lambda",
        ]
        extra_compile_args["nvcc"] = nvcc_flags

        # cuBLASLt fused GEMM epilogues (sfast._C.cublas_lowp_linear*)
        libraries += ["cublas", "cublasLt"]

        cutlass_dir = os.getenv("CUTLASS_DIR", os.path.join(this_dir, "third_party", "cutlass"))
        if os.path.isdir(cutlass_dir):
            define_macros += [("WITH_CUTLASS", None)]

    include_dirs = [extensions_dir]
    if "cutlass_dir" in locals() and os.path.isdir(cutlass_dir):
        include_dirs += [os.path.join(cutlass_dir, "include"), os.path.join(cutlass_dir, "tools", "util", "include")]

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
    name="stable_fast",
    version=get_version(),
    author="Cheng Zeyi",
    url="https://github.com/chengzeyi/stable-fast",
    description="Stable Fast is an ultra lightweight performance optimization framework for Hugging Fase diffuser pipelines.",
    package_dir={"": "src"},
    packages=find_packages(where="src"),
    python_requires=">=3.7",
    install_requires=[
        "torch",
        "packaging",
    ],
    extras_require={
        # triton kernels (group norm, layer norm, fused activations)
        "triton": ["triton>=2.1.0"],
        # xformers attention is used automatically when available
        "xformers": ["xformers>=0.0.20"],
        "diffusers": ["diffusers>=0.19.0", "transformers", "accelerate"],
    },
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
)
