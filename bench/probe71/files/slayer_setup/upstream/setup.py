"""
SLAYER PyTorch: Spike LAYer Error Reassignment for training spiking neural networks.

Builds the CUDA extensions used by slayer.spikeLayer:
    slayerCuda       - spike generation with refractory response, temporal convolution / correlation, shift
    slayerLoihiCuda  - Loihi-compatible fixed-point neuron dynamics (CUBA) for slayerLoihi.py

    python setup.py install            # or: pip install .
    TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5;8.0;8.6" pip install .   # when building on a machine without a GPU
"""
import os
import subprocess
import sys

from setuptools import setup, find_packages
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

HERE = os.path.dirname(os.path.abspath(__file__))


def get_version():
    with open(os.path.join(HERE, "src", "version.py")) as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split("=")[1].strip().strip('"')
    return "0.0.0"


def check_cuda():
    if CUDA_HOME is None:
        sys.exit(
            "CUDA_HOME is not set and nvcc could not be found. SLAYER needs the CUDA toolkit "
            "(the same major version PyTorch was built with) to compile slayerCuda."
        )
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"]).decode()
        print(out.strip().splitlines()[-1])
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"failed to run nvcc: {e}")


check_cuda()

nvcc_flags = [
    "-O3",
    "--use_fast_math",
    "--expt-relaxed-constexpr",
    "-lineinfo",
]
if os.environ.get("SLAYER_DEBUG", "0") == "1":
    nvcc_flags = ["-G", "-g", "-O0"]

cxx_flags = ["-O3", "-std=c++17"]

ext_modules = [
    CUDAExtension(
        name="slayerCuda",
        sources=[
            "src/cuda/slayerKernels.cu",
        ],
        depends=[
            "src/cuda/spikeKernels.h",
            "src/cuda/convKernels.h",
            "src/cuda/shiftKernels.h",
        ],
        extra_compile_args={"cxx": cxx_flags, "nvcc": nvcc_flags},
    ),
    CUDAExtension(  # Loihi fixed-point neuron model
        name="slayerLoihiCuda",
        sources=[
            "src/cuda/slayerLoihi.cu",
        ],
        depends=["src/cuda/spikeLoihiKernels.h"],
        extra_compile_args={"cxx": cxx_flags, "nvcc": nvcc_flags + ["-maxrregcount=64"]},
    ),
]

setup(
    name="slayerSNN",
    version=get_version(),
    description="SLAYER PyTorch: spike layer error reassignment in time",
    author="Sumit Bam Shrestha",
    url="https://github.com/bamsumit/slayerPytorch",
    packages=["slayerSNN"] + ["slayerSNN." + p for p in find_packages("src")],
    package_dir={"slayerSNN": "src"},
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    install_requires=[
        "torch>=1.8",
        "numpy",
        "pyyaml",
        "matplotlib",
        "h5py",
    ],
    python_requires=">=3.7",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA",
        "License :: OSI Approved :: GNU General Public License v3 (GPLv3)",
    ],
)
