"""
gomoku_gpu: vectorised gomoku / renju boards for AlphaZero self-play.

Thousands of boards are stepped in lockstep; win detection and legal-move masks are
computed by CUDA kernels when a CUDA toolkit is found at build time, otherwise by
the (much slower) OpenMP C++ implementation. Set FORCE_CPU=1 to skip the CUDA build.
"""
import os
import glob

from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))


def get_extensions():
    csrc = os.path.join("gomoku_gpu", "csrc")
    sources_cpp = [os.path.join(csrc, "bindings.cpp"), os.path.join(csrc, "board_cpu.cpp")]
    sources_cuda = sorted(glob.glob(os.path.join(csrc, "*.cu")))

    define_macros = []
    extra_compile_args = {"cxx": ["-O3", "-std=c++17", "-fopenmp"]}
    extra_link_args = ["-fopenmp"]

    if CUDA_HOME is not None and os.environ.get("FORCE_CPU", "0") != "1":
        extension = CUDAExtension
        sources = sources_cpp + sources_cuda
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-O3",
            "--use_fast_math",
            "--expt-relaxed-constexpr",
            "-gencode=arch=compute_70,code=sm_70",
            "-gencode=arch=compute_80,code=sm_80",
            "-gencode=arch=compute_86,code=sm_86",
            "-gencode=arch=compute_90,code=sm_90",
        ]
    else:
        print("gomoku_gpu: CUDA_HOME not found (or FORCE_CPU=1), building the CPU-only extension")
        extension = CppExtension
        sources = sources_cpp

    return [
        extension(
            "gomoku_gpu._C",
            sources,
            include_dirs=[os.path.join(here, csrc)],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        )
    ]


setup(
    name="gomoku_gpu",
    version="0.3.1",
    description="Vectorised gomoku boards on the GPU for AlphaZero self-play",
    packages=find_packages(exclude=("tests", "bench")),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.8",
    install_requires=["torch>=1.13", "numpy"],
    zip_safe=False,
)
