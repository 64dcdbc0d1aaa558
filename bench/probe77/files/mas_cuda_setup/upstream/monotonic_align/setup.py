"""Build the monotonic alignment search extensions.

Two back ends are built side by side:

* ``monotonic_align.core``      – the Cython DP from VITS / Glow-TTS (CPU, always built)
* ``monotonic_align._cuda_mas`` – one CUDA thread block per utterance (built when nvcc is found)

    cd monotonic_align && python setup.py build_ext --inplace
"""
import os
import subprocess
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    bare_metal_major = release[0]
    bare_metal_minor = release[1][0]
    return raw_output, bare_metal_major, bare_metal_minor


def cuda_arch_flags():
    # Respect TORCH_CUDA_ARCH_LIST if the user set it, otherwise build for the common training cards.
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return []
    _, major, minor = get_cuda_bare_metal_version(CUDA_HOME)
    flags = ["-gencode", "arch=compute_70,code=sm_70", "-gencode", "arch=compute_75,code=sm_75",
             "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_86,code=sm_86"]
    if int(major) >= 12 or (int(major) == 11 and int(minor) >= 8):
        flags += ["-gencode", "arch=compute_90,code=sm_90"]
    return flags


ext_modules = cythonize(
    [Extension("core", sources=["core.pyx"], include_dirs=[numpy.get_include()])],
    compiler_directives={"language_level": "3"},
)

build_cuda = (torch.cuda.is_available() or os.environ.get("FORCE_CUDA", "0") == "1") and CUDA_HOME is not None
if build_cuda:
    ext_modules.append(
        CUDAExtension(
            name="_cuda_mas",
            sources=[
                "csrc/mas.cpp",
                "csrc/mas_kernel.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": ["-O3", "--use_fast_math", "-lineinfo", "-U__CUDA_NO_HALF_OPERATORS__"] + cuda_arch_flags(),
            },
        )
    )
else:
    print("monotonic_align: CUDA toolkit not found, building the Cython back end only", file=sys.stderr)

setup(
    name="monotonic_align",
    version="0.2.0",
    description="Monotonic alignment search for VITS-style TTS (Cython + CUDA)",
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    install_requires=["numpy", "cython", "torch>=1.13"],
    zip_safe=False,
)
