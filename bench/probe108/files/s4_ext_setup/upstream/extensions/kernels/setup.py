"""Build the structured-kernel CUDA extension (Cauchy and log-Vandermonde multiplication).

    cd extensions/kernels && python setup.py install

Requires nvcc matching the CUDA version PyTorch was built with. If no GPU/CUDA toolkit
is found the package installs without the compiled module and the Python code falls
back to pykeops or the naive implementation.
"""
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

ext_modules = []
if torch.cuda.is_available() and CUDA_HOME is not None:
    arch_flags = []
    # compile for the local GPU only unless TORCH_CUDA_ARCH_LIST is set
    if "TORCH_CUDA_ARCH_LIST" not in os.environ:
        major, minor = torch.cuda.get_device_capability()
        arch_flags = [f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"]
    cauchy = CUDAExtension(
        "structured_kernels",
        [
            "cauchy.cpp",
            "cauchy_cuda.cu",
            "vandermonde.cpp",
            "vandermonde_cuda.cu",
        ],
        extra_compile_args={
            "cxx": ["-g", "-march=native", "-funroll-loops"],
            "nvcc": ["-O2", "-lineinfo", "--use_fast_math"] + arch_flags,
        },
    )
    ext_modules.append(cauchy)
else:
    print("structured_kernels: CUDA not available, skipping the compiled extension")

setup(
    name="structured_kernels",
    version="0.1.0",
    packages=["extensions.kernels"] if os.path.isdir("extensions") else [],
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    install_requires=["torch>=1.12"],
)
