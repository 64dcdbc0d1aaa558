#!/usr/bin/env python
"""fastclip: CLIP / SigLIP pre-training utilities with fused CUDA kernels.

Builds ``fastclip._C`` (fused softmax-cross-entropy over sharded logits, fused sigmoid
pairwise loss, fp16 top-k for retrieval evaluation) unless FASTCLIP_NO_EXT=1.

    pip install -e .                       # builds the extension for the local GPU
    TORCH_CUDA_ARCH_LIST="8.0;9.0" pip install .
"""
import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension, CppExtension

this_dir = os.path.dirname(os.path.abspath(__file__))
version = "0.4.1"


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    bare_metal_major = release[0]
    bare_metal_minor = release[1][0]
    return raw_output, bare_metal_major, bare_metal_minor


def check_cuda_torch_binary_vs_bare_metal(cuda_dir):
    raw_output, bare_metal_major, bare_metal_minor = get_cuda_bare_metal_version(cuda_dir)
    torch_binary_major = torch.version.cuda.split(".")[0]
    torch_binary_minor = torch.version.cuda.split(".")[1]

    print("\nCompiling cuda extensions with")
    print(raw_output + "from " + cuda_dir + "/bin\n")

    if (bare_metal_major != torch_binary_major) or (bare_metal_minor != torch_binary_minor):
        raise RuntimeError(
            "Cuda extensions are being compiled with a version of Cuda that does "
            "not match the version used to compile Pytorch binaries.  "
            "Pytorch binaries were compiled with Cuda {}.\n".format(torch.version.cuda)
            + "In some cases, a minor-version mismatch will not cause later errors:  "
            "https://github.com/NVIDIA/apex/pull/323#discussion_r287021798.  "
        )


def get_extensions():
    if os.environ.get("FASTCLIP_NO_EXT", "0") == "1":
        return []

    extensions_dir = os.path.join(this_dir, "csrc")
    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(extensions_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    sources = main_file + source_cpu
    extension = CppExtension
    define_macros = []
    extra_compile_args = {"cxx": ["-O3", "-std=c++17"]}

    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)
        extension = CUDAExtension
        sources += source_cuda
        define_macros += [("WITH_CUDA", None)]
        nvcc_flags = [
            "-O3",
            "-std=c++17",
            "--use_fast_math",
            "-U__CUDA_NO_HALF_OPERATORS__",
            "-U__CUDA_NO_HALF_CONVERSIONS__",
            "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
            "--expt-relaxed-constexpr",
            "--expt-extended-lambda",
            "-lineinfo",
        ]
        if not os.environ.get("TORCH_CUDA_ARCH_LIST"):
            nvcc_flags += [
                "-gencode", "arch=compute_70,code=sm_70",
                "-gencode", "arch=compute_80,code=sm_80",
                "-gencode", "arch=compute_90,code=sm_90",
            ]
        extra_compile_args["nvcc"] = nvcc_flags
    else:
        print("fastclip: CUDA not found, building the CPU reference kernels only", file=sys.stderr)

    include_dirs = [extensions_dir]

    ext_modules = [
        extension(
            "fastclip._C",
            sorted(sources),
            include_dirs=include_dirs,
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]
    return ext_modules


with open(os.path.join(this_dir, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="fastclip",
    version=version,
    author="fastclip contributors",
    description="Fused kernels and distributed losses for contrastive image-text pre-training",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/fastclip/fastclip",
    packages=find_packages(exclude=("csrc", "tests", "benchmarks")),
    python_requires=">=3.8",
    install_requires=[
        "torch>=2.0",
        "open_clip_torch>=2.20",
        "webdataset>=0.2.48",
        "numpy",
        "tqdm",
    ],
    extras_require={
        "triton": ["triton>=2.1"],
        "retrieval": ["faiss-gpu>=1.7.2", "autofaiss"],
        "dev": ["pytest", "ruff"],
    },
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    zip_safe=False,
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 11.8",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
        "License :: OSI Approved :: MIT License",
    ],
)
