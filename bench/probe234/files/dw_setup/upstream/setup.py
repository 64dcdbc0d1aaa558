"""
Build script for the wave propagators.

One extension module is built per (propagator, dimension, accuracy, dtype)
combination so that the stencil size and the floating point type are
compile-time constants in the kernels. The CPU versions are always built; the
CUDA versions are built when nvcc is found (or DEEPWAVE_FORCE_CUDA=1, e.g. when
building wheels on a machine without a GPU).
"""
import os

import setuptools
from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME

with open("README.md", "r") as fh:
    long_description = fh.read()

# Compile for all architectures we have on the cluster plus PTX for newer cards
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.0;7.0;7.5;8.0;8.6+PTX")

PROPAGATORS = ["scalar"]
DIMS = [1, 2, 3]
ACCURACIES = [2, 4, 8]
DTYPES = {"float": "float", "double": "double"}

CXX_FLAGS = ["-O3", "-march=native", "-fopenmp", "-Wall", "-std=c++17"]


def make_cpp_extension(prop, dim, accuracy, dtype):
    return CppExtension(
        f"deepwave.{prop}{dim}d_cpu_iso_{accuracy}_{dtype}",
        [
            f"deepwave/{prop}/{prop}.cpp",
            f"deepwave/{prop}/{prop}_cpu.cpp",
            f"deepwave/{prop}/{prop}_wrapper.cpp",
        ],
        define_macros=[("DIM", dim), ("TYPE", DTYPES[dtype]), ("ACCURACY", accuracy)],
        extra_compile_args=CXX_FLAGS,
        extra_link_args=["-fopenmp"],
    )


def make_cuda_extension(prop, dim, accuracy, dtype):
    return CUDAExtension(
        f"deepwave.{prop}{dim}d_gpu_iso_{accuracy}_{dtype}",
        [f"deepwave/{prop}/{prop}.cu", f"deepwave/{prop}/{prop}_gpu.cu", f"deepwave/{prop}/{prop}_wrapper.cpp"],
        define_macros=[("DIM", dim), ("TYPE", DTYPES[dtype]), ("ACCURACY", accuracy)],
        extra_compile_args={
            "cxx": ["-O3", "-std=c++17"],
            "nvcc": ["--restrict", "--use_fast_math", "-O3", "-std=c++17"],
        },
    )


ext_modules = []
for prop in PROPAGATORS:
    for dim in DIMS:
        for accuracy in ACCURACIES:
            for dtype in DTYPES:
                ext_modules.append(make_cpp_extension(prop, dim, accuracy, dtype))

if CUDA_HOME is not None or os.environ.get("DEEPWAVE_FORCE_CUDA", "0") == "1":
    for prop in PROPAGATORS:
        for dim in DIMS:
            for accuracy in ACCURACIES:
                for dtype in DTYPES:
                    ext_modules.append(make_cuda_extension(prop, dim, accuracy, dtype))
else:
    print("nvcc not found: building the CPU propagators only")

setup(
    name="deepwave",
    version="0.0.9",
    author="Alan Richardson",
    description="Wave propagation modules for PyTorch",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/ar4/deepwave",
    packages=find_packages(exclude=["tests", "docs"]),
    install_requires=["numpy", "scipy", "torch>=1.9"],
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)},
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: MIT License",
        "Operating System :: POSIX :: Linux",
        "Topic :: Scientific/Engineering :: Physics",
    ],
    python_requires=">=3.7",
    zip_safe=False,
)
