# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

"""Build script for the MS-AMP CUDA operators (fp8 arithmetic + fused LBAdam kernels)."""

import os
import subprocess
import sys
from pathlib import Path

from packaging.version import Version, parse
from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

here = Path(__file__).resolve().parent
version = (here / "msamp" / "__version__").read_text().strip() if (here / "msamp" / "__version__").exists() else "0.4.0"


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([os.path.join(cuda_dir, "bin", "nvcc"), "-V"], universal_newlines=True)
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
            f"Pytorch binaries were compiled with Cuda {torch.version.cuda}.\n"
        )
    return bare_metal_version


if CUDA_HOME is None:
    raise RuntimeError("MS-AMP requires the CUDA toolkit (nvcc) to build its extensions; set CUDA_HOME.")

cuda_version = check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)
if cuda_version < Version("11.8"):
    raise RuntimeError("FP8 kernels need CUDA >= 11.8 (sm_89/sm_90 support).")

cc_flag = []
for arch in os.environ.get("MSAMP_CUDA_ARCHS", "80;89;90").split(";"):
    cc_flag += ["-gencode", f"arch=compute_{arch},code=sm_{arch}"]

nvcc_flags = [
    "-O3",
    "--use_fast_math",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT16_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "-lineinfo",
] + cc_flag

ext_modules = [
    CUDAExtension(  # fp8 cast / amax / scaling kernels
        name="msamp_arithmetic",
        sources=[
            "msamp/operators/arithmetic/arithmetic.cpp",
            "msamp/operators/arithmetic/arithmetic_kernel.cu",
        ],
        include_dirs=[str(here / "msamp" / "operators" / "include")],
        extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
    ),
    CUDAExtension(  # fused LBAdamW with fp8 optimizer states
        name="msamp_adamw",
        sources=[
            "msamp/optim/adamw/adamw.cpp",
            "msamp/optim/adamw/adamw_kernel.cu",
        ],
        include_dirs=[str(here / "msamp" / "operators" / "include")],
        extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
    ),
]

install_requires = [
    "torch>=2.1",
    "numpy",
    "packaging",
    "deepspeed==0.14.4",
    "transformer-engine>=1.5",
    "colorlog>=6.7.0",
]

setup(
    name="msamp",
    version=version,
    description="Microsoft Automatic Mixed Precision (FP8) library",
    long_description=(here / "README.md").read_text() if (here / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    author="Microsoft",
    license="MIT",
    python_requires=">=3.8",
    packages=find_packages(exclude=["tests", "examples", "docs"]),
    install_requires=install_requires,
    extras_require={
        "dev": ["pytest", "pytest-cov", "yapf==0.31.0", "mypy", "flake8"],
    },
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
