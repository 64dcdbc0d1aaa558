#
# Copyright (C) 2023, Inria
# GRAPHDECO research group, https://team.inria.fr/graphdeco
# All rights reserved.
#
# This software is free for non-commercial, research and evaluation use
# under the terms of the LICENSE.md file.
#
# For inquiries contact  george.drettakis@inria.fr
#
# Build script for the differentiable Gaussian rasterizer.
#
#   pip install submodules/diff-gaussian-rasterization
#
# The extension is compiled for the architectures listed in TORCH_CUDA_ARCH_LIST; when the
# variable is not set we default to the cards used for the paper so that the wheel also
# works on machines whose GPU is not visible at build time (docker builds, clusters).
#

import os

from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, BuildExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6+PTX")

HERE = os.path.dirname(os.path.abspath(__file__))
GLM_DIR = os.path.join(HERE, "third_party", "glm")

if not os.path.isdir(os.path.join(GLM_DIR, "glm")):
    raise RuntimeError(
        "third_party/glm is empty: clone the repository with --recursive "
        "or run `git submodule update --init --recursive`."
    )

SOURCES = [
    "cuda_rasterizer/rasterizer_impl.cu",
    "cuda_rasterizer/forward.cu",
    "cuda_rasterizer/backward.cu",
    "cuda_rasterizer/adam.cu",
    "cuda_rasterizer/fused_ssim.cu",
    "rasterize_points.cu",
    "ext.cpp",
]

setup(
    name="diff_gaussian_rasterization",
    version="0.0.1",
    description="Differentiable tile-based rasterizer for 3D Gaussian splats",
    packages=["diff_gaussian_rasterization"],
    ext_modules=[
        CUDAExtension(
            name="diff_gaussian_rasterization._C",
            sources=SOURCES,
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--use_fast_math", "-I" + GLM_DIR],
            },
        )
    ],
    cmdclass={
        "build_ext": BuildExtension
    },
    python_requires=">=3.7",
)
