"""Build the fused periodic neighbour-list extension used by gnome_pipeline.neighbors.

CPU kernels are always built; the CUDA kernels (cell-list binning + per-cell
radius search, see pbc_neighbors/csrc/cuda/) are built when a CUDA toolkit is
found or FORCE_CUDA=1 is set (e.g. inside `docker build`, where no GPU is
visible).
"""
import glob
import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(ROOT, "pbc_neighbors", "csrc")


def get_extensions():
    sources = [os.path.join(CSRC, "bindings.cpp")] + glob.glob(os.path.join(CSRC, "cpu", "*.cpp"))
    extension = CppExtension
    define_macros = []
    extra_compile_args = {"cxx": ["-O3", "-std=c++17", "-fopenmp"]}
    extra_link_args = ["-fopenmp"]

    force_cuda = os.getenv("FORCE_CUDA", "0") == "1"
    if (torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda:
        extension = CUDAExtension
        sources += glob.glob(os.path.join(CSRC, "cuda", "*.cu"))
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-O3",
            "--use_fast_math",
            "-lineinfo",
            "--expt-relaxed-constexpr",
            "-std=c++17",
        ]
        # cell-list kernels use 64-bit atomics on shared memory (sm_60+)
        arch_list = os.getenv("TORCH_CUDA_ARCH_LIST")
        if arch_list is None:
            extra_compile_args["nvcc"] += ["-gencode=arch=compute_80,code=sm_80"]

    return [
        extension(
            "pbc_neighbors._C",
            sources,
            include_dirs=[CSRC],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        )
    ]


setup(
    name="pbc_neighbors",
    version="0.3.1",
    description="Periodic radius-graph construction for crystal GNNs (CPU + CUDA)",
    packages=find_packages(include=["pbc_neighbors", "pbc_neighbors.*"]),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    python_requires=">=3.9",
    install_requires=["torch>=2.0"],
    zip_safe=False,
)
