"""Build script for fast_crf: batched Viterbi / forward-algorithm kernels for
linear-chain CRF taggers (flair, AllenNLP ``ConditionalRandomField``).

    pip install -e .                 # builds the CUDA extension if nvcc is found
    FAST_CRF_NO_CUDA=1 pip install . # pure-Python fallback only

The CUDA kernels need compute capability >= 6.0 (they use atomicAdd on doubles
for the log-partition backward pass).
"""
import os
import subprocess
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

VERSION = "0.3.1"
HERE = os.path.dirname(os.path.abspath(__file__))


def get_cuda_version():
    if CUDA_HOME is None:
        return None
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "-V"], universal_newlines=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    release = out.split("release ")[-1].split(",")[0]
    return tuple(int(x) for x in release.split("."))


def get_extensions():
    if os.environ.get("FAST_CRF_NO_CUDA", "0") == "1":
        print("FAST_CRF_NO_CUDA=1: skipping the CUDA extension", file=sys.stderr)
        return []

    extra_compile_args = {"cxx": ["-O3", "-std=c++17"]}
    define_macros = []
    sources = [
        "csrc/fast_crf.cpp",
        "csrc/viterbi_cpu.cpp",
    ]

    cuda_version = get_cuda_version()
    force_cuda = os.environ.get("FORCE_CUDA", "0") == "1"
    if (torch.cuda.is_available() and cuda_version is not None) or force_cuda:
        sources += [
            "csrc/viterbi_cuda.cu",
            "csrc/forward_backward_cuda.cu",
        ]
        define_macros += [("WITH_CUDA", None)]
        nvcc_flags = [
            "-O3",
            "--use_fast_math",
            "-U__CUDA_NO_HALF_OPERATORS__",
            "-U__CUDA_NO_HALF_CONVERSIONS__",
            "--expt-relaxed-constexpr",
        ]
        arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST")
        if not arch_list:
            nvcc_flags += [
                "-gencode=arch=compute_60,code=sm_60",
                "-gencode=arch=compute_70,code=sm_70",
                "-gencode=arch=compute_80,code=sm_80",
            ]
            if cuda_version is not None and cuda_version >= (11, 8):
                nvcc_flags.append("-gencode=arch=compute_90,code=sm_90")
        extra_compile_args["nvcc"] = nvcc_flags
        ext_cls = CUDAExtension
    else:
        print("CUDA not found: building CPU-only kernels", file=sys.stderr)
        ext_cls = CppExtension

    return [
        ext_cls(
            name="fast_crf._C",
            sources=[os.path.join(HERE, s) for s in sources],
            include_dirs=[os.path.join(HERE, "csrc")],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]


with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="fast-crf",
    version=VERSION,
    description="Fused CUDA kernels for linear-chain CRF decoding",
    long_description=long_description,
    long_description_content_type="text/markdown",
    author="NLP group",
    license="Apache-2.0",
    packages=find_packages(exclude=("tests",)),
    python_requires=">=3.8",
    install_requires=["torch>=1.13"],
    extras_require={"test": ["pytest", "pytorch-crf==0.7.2"]},
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    zip_safe=False,
)
