"""Ahead-of-time build of the StyleGAN2 CUDA kernels used by NCSN++ / DDPM++.

op/upfirdn2d.py and op/fused_act.py JIT-compile these with
torch.utils.cpp_extension.load() on first import, which needs nvcc on every
worker and races when several jobs start on a shared filesystem.  Installing
this package once per environment avoids both:

    TORCH_CUDA_ARCH_LIST="7.0;8.0" pip install -e .
"""
import os

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6")

NVCC_FLAGS = [
    "-O3",
    "--use_fast_math",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "--expt-relaxed-constexpr",
]


def _ext_args():
    return {"cxx": ["-O3"], "nvcc": NVCC_FLAGS}


setup(
    name="score_sde_ops",
    version="0.1.0",
    description="Precompiled upfirdn2d / fused_bias_act kernels for score_sde_pytorch",
    packages=find_packages(include=["op", "op.*"]),
    ext_modules=[
        CUDAExtension("op.upfirdn2d_cuda", ["op/upfirdn2d.cpp", "op/upfirdn2d_kernel.cu"], extra_compile_args=_ext_args()),
        CUDAExtension("op.fused_cuda", ["op/fused_bias_act.cpp", "op/fused_bias_act_kernel.cu"], extra_compile_args=_ext_args()),
    ],
    cmdclass={"build_ext": BuildExtension},
    install_requires=["torch>=1.7", "ninja"],
    python_requires=">=3.7",
)
