"""triton_apex: apex-compatible fused layers backed by Triton.

    pip install .                      # pure Python + Triton kernels
    pip install . --global-option=--cuda_ext   # also build the apex CUDA layer-norm extension
"""
import os
import subprocess
import sys

from packaging.version import Version, parse
from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    bare_metal_version = parse(output[release_idx].split(",")[0])
    return raw_output, bare_metal_version


def check_cuda_torch_binary_vs_bare_metal(cuda_dir):
    raw_output, bare_metal_version = get_cuda_bare_metal_version(cuda_dir)
    torch_binary_version = parse(torch.version.cuda)

    print("\nCompiling cuda extensions with")
    print(raw_output + "from " + cuda_dir + "/bin\n")

    if bare_metal_version.major != torch_binary_version.major:
        raise RuntimeError(
            "Cuda extensions are being compiled with a version of Cuda that does "
            "not match the version used to compile Pytorch binaries.  "
            "Pytorch binaries were compiled with Cuda {}.\n".format(torch.version.cuda)
        )


if not torch.cuda.is_available():
    # Extension builds after https://github.com/pytorch/pytorch/pull/23408 attempt to query
    # torch.cuda.get_device_capability(), which will fail if you are compiling in an environment
    # without visible GPUs (e.g. during an nvidia-docker build command).
    print(
        "\nWarning: Torch did not find available GPUs on this system.\n",
        "If your intention is to cross-compile, this is not an error.\n"
        "By default, the extension will be compiled for Volta (compute capability 7.0), "
        "Ampere (8.0, 8.6) and Hopper (9.0) if the CUDA version supports them.\n",
    )
    if os.environ.get("TORCH_CUDA_ARCH_LIST", None) is None and CUDA_HOME is not None:
        _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
        if bare_metal_version >= Version("11.8"):
            os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0;7.5;8.0;8.6;9.0"
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0;7.5;8.0;8.6"

ext_modules = []
cmdclass = {}

if "--cuda_ext" in sys.argv:
    sys.argv.remove("--cuda_ext")
    if CUDA_HOME is None:
        raise RuntimeError("--cuda_ext was requested, but nvcc was not found. Are you sure your environment has nvcc available?")
    check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)
    ext_modules.append(
        CUDAExtension(
            name="fused_layer_norm_cuda",
            sources=["csrc/layer_norm_cuda.cpp", "csrc/layer_norm_cuda_kernel.cu"],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--use_fast_math", "-maxrregcount=50", "-U__CUDA_NO_HALF_OPERATORS__"],
            },
        )
    )
    cmdclass["build_ext"] = BuildExtension


setup(
    name="triton_apex",
    version="0.3.1",
    description="apex-compatible fused layers (LayerNorm, RMSNorm, dropout-add) written in Triton",
    packages=find_packages(exclude=("csrc", "tests", "benchmarks")),
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    python_requires=">=3.8",
    install_requires=[
        "torch>=2.1",
        "triton>=2.1",
        "packaging",
    ],
    extras_require={
        "test": ["pytest", "numpy"],
        "bench": ["matplotlib", "pandas", "nvidia-ml-py"],
    },
)
