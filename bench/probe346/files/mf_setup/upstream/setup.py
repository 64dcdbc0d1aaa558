#!/usr/bin/env python
"""
Installs the `museformer` fairseq user-dir package together with its CUDA kernels.

    pip install -e .            # builds museformer/kernels/range_fill/range_fill_cuda*.so

Set TORCH_CUDA_ARCH_LIST to the architectures of the GPUs you train on; the default below
covers V100 and A100.
"""
import os

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;8.0")

here = os.path.dirname(os.path.abspath(__file__))


def read_readme():
    with open(os.path.join(here, "README.md"), encoding="utf-8") as f:
        return f.read()


def kernel_src(*parts):
    return os.path.join("museformer", "kernels", *parts)


setup(
    name="museformer",
    version="0.1.0",
    description="Museformer: Transformer with fine- and coarse-grained attention for music generation",
    long_description=read_readme(),
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=["tests", "tools"]),
    python_requires=">=3.8",
    install_requires=[
        "fairseq==0.10.2",
        "triton==2.0.0",
        "miditoolkit>=0.1.16",
        "numpy",
        "tensorboardX",
    ],
    ext_modules=[
        CUDAExtension(
            name="museformer.kernels.range_fill.range_fill_cuda",
            sources=[
                kernel_src("range_fill", "range_fill.cpp"),
                kernel_src("range_fill", "range_fill_kernel.cu"),
            ],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--use_fast_math", "-lineinfo"],
            },
        ),
    ],
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
