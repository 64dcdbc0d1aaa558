# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.
#
# Builds the two native extensions of the codec:
#
#   MLCodec_extensions_cpp     rANS entropy coder (C++/pybind11, host only)
#   inference_extensions_cuda  fused inference kernels (CUDA), optional but ~2x faster
#
#   cd src/layers/extensions && pip install -e . --no-build-isolation
#   DCVC_BUILD_CUDA=0 pip install -e .      # entropy coder only

import glob
import os
import sys

from setuptools import setup
from pybind11.setup_helpers import Pybind11Extension
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

HERE = os.path.dirname(os.path.abspath(__file__))
build_cuda = os.getenv("DCVC_BUILD_CUDA", "1") == "1"

# keep the fat binary small: Volta .. Hopper
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;8.9;9.0")

if sys.platform == "win32":
    cxx_flags = ["/O2", "/std:c++17"]
else:
    cxx_flags = ["-O3", "-std=c++17", "-fvisibility=hidden"]

nvcc_flags = [
    "-O3",
    "--use_fast_math",
    "--extra-device-vectorization",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_HALF2_OPERATORS__",
]

ext_modules = [
    Pybind11Extension(
        name="MLCodec_extensions_cpp",
        sources=sorted(glob.glob(os.path.join(HERE, "entropy", "*.cpp"))),
        include_dirs=[os.path.join(HERE, "entropy")],
        extra_compile_args=cxx_flags,
        cxx_std=17,
    ),
]

if build_cuda:
    if CUDA_HOME is None:
        raise RuntimeError(
            "CUDA_HOME not found, cannot build inference_extensions_cuda. "
            "Set DCVC_BUILD_CUDA=0 to build the entropy coder only."
        )
    ext_modules.append(
        CUDAExtension(
            name="inference_extensions_cuda",
            sources=[
                os.path.join(HERE, "inference", "def.cpp"),
                os.path.join(HERE, "inference", "kernel.cu"),
            ],
            extra_compile_args={"cxx": cxx_flags, "nvcc": nvcc_flags},
        )
    )

with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="dcvc_extensions",
    version="0.3.0",
    description="Native extensions (entropy coder + fused inference kernels) for DCVC",
    long_description=long_description,
    long_description_content_type="text/markdown",
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    python_requires=">=3.8",
    install_requires=["torch>=2.0", "pybind11>=2.10"],
    zip_safe=False,
)
