"""Build script for videogen: pure-Python package plus optional fused CUDA kernels.

    pip install -e .                      # python only
    BUILD_EXT=1 pip install -e . --no-build-isolation   # also compile csrc/ kernels (needs nvcc)
"""
import os
import subprocess
import sys
from typing import List

from setuptools import find_packages, setup

THIS_DIR = os.path.dirname(os.path.abspath(__file__))
BUILD_EXT = os.environ.get("BUILD_EXT", "0") == "1"


def fetch_requirements(path) -> List[str]:
    with open(path, "r") as fd:
        return [r.strip() for r in fd.readlines() if r.strip() and not r.startswith(("#", "--"))]


def fetch_readme() -> str:
    with open("README.md", encoding="utf-8") as f:
        return f.read()


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    return raw_output, int(release[0]), int(release[1][0])


def append_nvcc_threads(nvcc_extra_args):
    return nvcc_extra_args + ["--threads", os.environ.get("NVCC_THREADS", "4")]


ext_modules = []
cmdclass = {}

if BUILD_EXT:
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

    if CUDA_HOME is None:
        raise RuntimeError("BUILD_EXT=1 but CUDA_HOME is not set; install the CUDA toolkit or unset BUILD_EXT")
    _, bare_major, bare_minor = get_cuda_bare_metal_version(CUDA_HOME)
    if bare_major < 11:
        raise RuntimeError("fused kernels need CUDA >= 11.0")

    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6;9.0")
    cc_flag = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]

    ext_modules.append(
        CUDAExtension(
            name="videogen_kernels._C",
            sources=[
                "csrc/fused_adaln/fused_adaln.cpp",
                "csrc/fused_adaln/fused_adaln_kernel.cu",
                "csrc/rope3d/rope3d.cpp",
                "csrc/rope3d/rope3d_kernel.cu",
                "csrc/group_norm_silu/gn_silu_kernel.cu",
            ],
            include_dirs=[os.path.join(THIS_DIR, "csrc", "include")],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": append_nvcc_threads(
                    ["-O3", "--use_fast_math", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF2_OPERATORS__",
                     "--expt-relaxed-constexpr", "--expt-extended-lambda"] + cc_flag
                ),
            },
        )
    )
    cmdclass = {"build_ext": BuildExtension}

setup(
    name="videogen",
    version="1.2.0",
    packages=find_packages(exclude=("assets", "configs", "docs", "outputs", "pretrained_models", "scripts",
                                    "tests", "tools", "*.egg-info")),
    description="Democratizing efficient video production for all",
    long_description=fetch_readme(),
    long_description_content_type="text/markdown",
    license="Apache Software License 2.0",
    url="https://github.com/example/videogen",
    project_urls={"Bug Tracker": "https://github.com/example/videogen/issues"},
    install_requires=fetch_requirements("requirements/requirements.txt"),
    extras_require={
        "kernels": ["flash-attn>=2.5.8", "xformers>=0.0.25"],
        "eval": fetch_requirements("requirements/requirements-eval.txt"),
    },
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    python_requires=">=3.8",
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: Apache Software License",
        "Environment :: GPU :: NVIDIA CUDA",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: System :: Distributed Computing",
    ],
)
