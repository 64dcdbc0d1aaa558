import os
import sys

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

__version__ = "0.7.0"

long_description = """
CUDA-Warp RNN-Transducer loss for PyTorch.

The core is a CUDA kernel that computes the forward/backward variables of the
RNN-T lattice with one warp per (b, u) row, plus a "gather" mode that avoids
materialising the full (N, T, U, V) gradient and a "compact" mode for
unpadded label sequences.
"""

if "--help" not in sys.argv and "clean" not in sys.argv:
    if not torch.cuda.is_available() and os.getenv("FORCE_CUDA", "0") != "1":
        raise RuntimeError(
            "warp_rnnt requires a CUDA-capable GPU at build time "
            "(set FORCE_CUDA=1 to cross-compile on a machine without one)"
        )
    if CUDA_HOME is None:
        raise RuntimeError("CUDA_HOME is not set; cannot find nvcc")

# build for the common data-centre architectures unless told otherwise
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.0;7.0;7.5;8.0;8.6;9.0")


def get_long_description():
    here = os.path.abspath(os.path.dirname(__file__))
    readme = os.path.join(here, "README.md")
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            return f.read()
    return long_description


setup(
    name="warp_rnnt",
    version=__version__,
    description="PyTorch bindings for CUDA-Warp RNN-Transducer",
    long_description=get_long_description(),
    long_description_content_type="text/markdown",
    url="https://github.com/example/warp-rnnt/tree/master/pytorch_binding",
    author="ASR tools maintainers",
    license="MIT",
    packages=["warp_rnnt"],
    ext_modules=[
        CUDAExtension(
            name="warp_rnnt._C",
            sources=["core.cu", "core_gather.cu", "core_compact.cu", "binding.cpp"],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--use_fast_math", "-lineinfo", "--expt-relaxed-constexpr"],
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    setup_requires=["pybind11", "numpy", "torch>=1.13"],
    install_requires=["pybind11", "numpy", "torch>=1.13"],
    python_requires=">=3.8",
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: MIT License",
        "Operating System :: POSIX :: Linux",
        "Environment :: GPU :: NVIDIA CUDA",
    ],
)
