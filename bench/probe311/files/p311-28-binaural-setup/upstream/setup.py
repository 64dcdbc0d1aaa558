"""
Builds the optional fused CUDA kernel for time warping (src/warping.py).

    python setup.py build_ext --inplace     # or: pip install -e .

Requires nvcc matching the CUDA version PyTorch was built with. Set TORCH_CUDA_ARCH_LIST to
restrict the architectures that are compiled (defaults to Volta + Ampere below).
"""
import os

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6")

ext_modules = [
    CUDAExtension(
        name="warp_cuda",
        sources=["csrc/warp_cuda.cpp", "csrc/warp_cuda_kernel.cu"],
        extra_compile_args={
            "cxx": ["-O3", "-std=c++17"],
            "nvcc": ["-O3", "--use_fast_math", "-lineinfo"],
        },
    )
]

with open("requirements.txt") as f:
    install_requires = [line.strip() for line in f if line.strip() and not line.startswith(("#", "-"))]

setup(
    name="binaural_speech_synthesis",
    version="0.2.0",
    description="Neural synthesis of binaural speech from mono audio",
    packages=find_packages(exclude=("tests",)),
    python_requires=">=3.8",
    install_requires=install_requires,
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
)
