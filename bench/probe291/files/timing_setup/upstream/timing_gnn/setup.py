"""Build the optional fused level-propagation kernel used by model.CellArcProp.

    python setup.py build_ext --inplace

Without it the model falls back to the (slower) per-level PyTorch loop.
"""
import os
import subprocess

from setuptools import setup
import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME


def cuda_arch_flags():
    # default to the GPUs we train on; override with TORCH_CUDA_ARCH_LIST
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return []
    return [
        "-gencode=arch=compute_70,code=sm_70",
        "-gencode=arch=compute_80,code=sm_80",
        "-gencode=arch=compute_86,code=sm_86",
    ]


def get_extensions():
    if CUDA_HOME is None or not torch.cuda.is_available():
        print("CUDA not found, skipping timing_prop_cuda (the PyTorch fallback will be used)")
        return []
    nvcc_version = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"]).decode()
    print("building with", nvcc_version.strip().splitlines()[-1])
    return [
        CUDAExtension(
            name="timing_prop_cuda",
            sources=[
                "csrc/timing_prop.cpp",
                "csrc/timing_prop_kernel.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": ["-O3", "--use_fast_math", "-lineinfo"] + cuda_arch_flags(),
            },
        )
    ]


setup(
    name="timing_gnn",
    version="0.3.0",
    description="Timing-engine-inspired GNN for pre-routing slack prediction",
    py_modules=["model"],
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.8",
    install_requires=["torch>=2.0", "torch-scatter>=2.1", "numpy"],
)
