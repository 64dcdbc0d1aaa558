"""specbench: tree-based speculative decoding kernels and benchmarks.

    pip install -e .                                # builds the CUDA extension (needs nvcc >= 11.8)
    SPECBENCH_BUILD_CUDA_EXT=0 pip install -e .     # Triton / PyTorch paths only
"""
import os
import subprocess

from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    bare_metal_version = output[release_idx].split(",")[0]
    return raw_output, bare_metal_version


def cc_flags():
    flags = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_86,code=sm_86"]
    _, ver = get_cuda_bare_metal_version(CUDA_HOME)
    major, minor = (int(x) for x in ver.split("."))
    if (major, minor) >= (11, 8):
        flags += ["-gencode", "arch=compute_90,code=sm_90"]
    return flags


BUILD_EXT = os.environ.get("SPECBENCH_BUILD_CUDA_EXT", "1") == "1"

ext_modules = []
if BUILD_EXT:
    ext_modules.append(
        CUDAExtension(
            name="tree_attn_cuda",
            sources=[
                "csrc/tree_attn.cpp",
                "csrc/tree_attn_kernel.cu",
                "csrc/gather_kv_kernel.cu",
            ],
            include_dirs=[os.path.join(this_dir, "csrc")],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": [
                    "-O3",
                    "--use_fast_math",
                    "-U__CUDA_NO_HALF_OPERATORS__",
                    "-U__CUDA_NO_HALF_CONVERSIONS__",
                    "--expt-relaxed-constexpr",
                ]
                + cc_flags(),
            },
        )
    )

setup(
    name="specbench",
    version="0.2.0",
    description="Tree attention kernels and benchmarks for speculative decoding",
    packages=find_packages(exclude=("csrc", "benchmarks", "tests")),
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension} if ext_modules else {},
    install_requires=[
        "torch>=2.1",
        "triton>=2.1",
        "transformers>=4.36",
        "flash-attn>=2.5.0",
        "numpy",
    ],
    python_requires=">=3.9",
)
