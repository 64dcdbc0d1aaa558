"""
Fused attention kernels for the BLOOM / GPT-NeoX code paths of the text-generation server.

    cd server/custom_kernels && python setup.py install

The kernels are optional: the modeling code falls back to the PyTorch implementation when the
`custom_kernels` package cannot be imported (or DISABLE_CUSTOM_KERNELS=True).
"""
import os
import subprocess
import sys

import torch
from packaging.version import Version, parse
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))


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
            "Cuda extensions are being compiled with a version of Cuda that does not match the version used to "
            "compile Pytorch binaries. Pytorch binaries were compiled with Cuda {}.\n".format(torch.version.cuda)
            + "In some cases, a minor-version mismatch will not cause later errors."
        )


if not torch.version.hip:
    check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)

# Default to Ampere and Hopper when building without a visible GPU (docker build)
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6;9.0")

extra_compile_args = {"cxx": ["-O3", "-std=c++17"], "nvcc": ["-O3", "-std=c++17", "--use_fast_math"]}
_, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
cc_flag = ["-gencode", "arch=compute_80,code=sm_80"]
if bare_metal_version >= Version("11.8"):
    cc_flag += ["-gencode", "arch=compute_90,code=sm_90"]
extra_compile_args["nvcc"] += cc_flag

setup(
    name="custom_kernels",
    version="0.2.0",
    packages=find_packages(),
    ext_modules=[
        CUDAExtension(
            name="custom_kernels.fused_bloom_attention_cuda",
            sources=["custom_kernels/fused_bloom_attention_cuda.cu"],
            extra_compile_args=extra_compile_args,
        ),
        CUDAExtension(  # generic (non-alibi) fused attention
            name="custom_kernels.fused_attention_cuda",
            sources=["custom_kernels/fused_attention_cuda.cu"],
            extra_compile_args=extra_compile_args,
        ),
    ],
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.9",
    install_requires=["torch>=2.0"],
)
