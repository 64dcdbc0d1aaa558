"""Build script for ctr_ops: fused CUDA kernels for CTR models (FM / dot interaction, cross layer, hashed
embedding) packaged as the `ctr_ops._C` extension.

    pip install -v --no-build-isolation .
    TORCH_CUDA_ARCH_LIST="8.0;9.0" pip install -v --no-build-isolation .   # pin the target SMs

Set CTR_OPS_NO_EXT=1 to install the pure-python package only (every op then runs its torch fallback).
"""
import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
VERSION = "0.4.1"


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([os.path.join(cuda_dir, "bin", "nvcc"), "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    return int(release[0]), int(release[1].rstrip(","))


def default_arch_flags():
    """gencode flags for the SMs we ship SASS for, unless TORCH_CUDA_ARCH_LIST overrides them."""
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return []
    major, minor = get_cuda_bare_metal_version(CUDA_HOME)
    flags = ["-gencode", "arch=compute_70,code=sm_70", "-gencode", "arch=compute_80,code=sm_80"]
    if (major, minor) >= (11, 8):
        flags += ["-gencode", "arch=compute_90,code=sm_90"]
    return flags


def write_version_file():
    with open(os.path.join(ROOT, "ctr_ops", "version.py"), "w") as f:
        f.write(f'__version__ = "{VERSION}"\n')
        f.write(f'torch_version = "{torch.__version__}"\n')
        f.write(f'cuda_version = "{torch.version.cuda}"\n')


def get_extensions():
    if os.environ.get("CTR_OPS_NO_EXT", "0") == "1":
        return []
    sources = sorted(glob.glob(os.path.join("ctr_ops", "csrc", "*.cpp")))
    cuda_sources = sorted(glob.glob(os.path.join("ctr_ops", "csrc", "cuda", "*.cu")))
    define_macros = [("WITH_CUDA", None)]
    extra_compile_args = {
        "cxx": ["-O3", "-std=c++17"],
        "nvcc": [
            "-O3",
            "-std=c++17",
            "--use_fast_math",
            "--expt-relaxed-constexpr",
            "-U__CUDA_NO_HALF_OPERATORS__",
            "-U__CUDA_NO_HALF_CONVERSIONS__",
            "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        ] + default_arch_flags(),
    }
    if CUDA_HOME is None:
        raise RuntimeError(
            "ctr_ops needs nvcc: CUDA_HOME is not set and no CUDA toolkit was found. "
            "Install the CUDA toolkit matching torch.version.cuda, or set CTR_OPS_NO_EXT=1.")
    ext = CUDAExtension(
        name="ctr_ops._C",
        sources=sources + cuda_sources,
        include_dirs=[os.path.join(ROOT, "ctr_ops", "csrc")],
        define_macros=define_macros,
        extra_compile_args=extra_compile_args,
        libraries=["cublas"],
    )
    return [ext]


def get_cpu_extensions():
    """Host-side helpers (feature hashing, vocab lookup) that do not need a GPU toolchain."""
    return [
        CppExtension(
            name="ctr_ops._hashing",
            sources=[os.path.join("ctr_ops", "csrc", "host", "hashing.cpp")],
            extra_compile_args=["-O3", "-std=c++17", "-fopenmp"],
            extra_link_args=["-fopenmp"],
        )
    ]


with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
    long_description = fh.read()

write_version_file()

setup(
    name="ctr_ops",
    version=VERSION,
    description="Fused CUDA kernels for click-through-rate models (FM, DCN cross, hashed embeddings)",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("tests", "benchmarks")),
    ext_modules=get_extensions() + get_cpu_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    python_requires=">=3.8",
    install_requires=[
        "torch>=1.13",
        "numpy",
        "triton>=2.1; platform_system == 'Linux'",
    ],
    extras_require={
        "test": ["pytest", "deepctr-torch"],
        "bench": ["pynvml", "pandas"],
    },
    zip_safe=False,
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 11",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
        "License :: OSI Approved :: Apache Software License",
    ],
)
