# S-LoRA: builds the Python package plus the custom BGMV kernels
# (``slora._kernels``) adapted from punica for the unified memory pool.
import os
import sys

from setuptools import find_packages, setup

SKIP_CUDA_BUILD = os.getenv("SLORA_SKIP_CUDA_BUILD", "FALSE") == "TRUE"

ext_modules = []
cmdclass = {}

if not SKIP_CUDA_BUILD:
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

    if CUDA_HOME is None:
        sys.exit("CUDA_HOME is not set; install the CUDA toolkit or set SLORA_SKIP_CUDA_BUILD=TRUE")

    major, minor = torch.cuda.get_device_capability() if torch.cuda.is_available() else (8, 0)
    if (major, minor) < (8, 0):
        print(f"warning: detected sm_{major}{minor}; bgmv kernels are tuned for sm_80 and newer")

    nvcc_flags = [
        "-O3",
        "-std=c++17",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_BFLOAT16_OPERATORS__",
        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "--expt-relaxed-constexpr",
        "--use_fast_math",
    ]
    if os.getenv("TORCH_CUDA_ARCH_LIST") is None:
        os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;8.6;8.9;9.0"

    ext_modules.append(
        CUDAExtension(
            "slora._kernels",
            [
                "slora/csrc/lora_ops.cc",
                "slora/csrc/bgmv/bgmv_all.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": nvcc_flags,
            },
        )
    )
    cmdclass["build_ext"] = BuildExtension

setup(
    name="slora",
    version="0.1.0",
    packages=find_packages(exclude=("build", "include", "test", "dist", "docs", "benchmarks", "slora.egg-info")),
    author="S-LoRA authors",
    license="Apache",
    description="S-LoRA: Serving Thousands of Concurrent LoRA Adapters",
    long_description=open("README.md").read() if os.path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    install_requires=[
        "torch>=2.0.1",
        "triton==2.1.0",
        "rpyc",
        "uvloop",
        "uvicorn",
        "fastapi",
        "transformers>=4.34",
        "sentencepiece",
        "ninja",
        "numpy",
        "tqdm",
    ],
    ext_modules=ext_modules,
    cmdclass=cmdclass,
)
