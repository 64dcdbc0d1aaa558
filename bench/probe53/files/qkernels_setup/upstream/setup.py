# Build script for qkernels: mixed-precision GEMM kernels (Marlin-style W4A16, FP8 rowwise) exposed as
# torch.library ops (TORCH_LIBRARY(qkernels, m)) with fake/meta impls so torch.compile can trace them.
#
#   pip install -v --no-build-isolation .            # build for the local GPU arch
#   TORCH_CUDA_ARCH_LIST="8.0;9.0a" pip wheel .       # release wheels
import glob
import os
import subprocess
import sys
from datetime import datetime

from setuptools import find_packages, setup

ROOT = os.path.dirname(os.path.abspath(__file__))
current_date = datetime.now().strftime("%Y%m%d")


def read_version(path=os.path.join(ROOT, "version.txt")):
    with open(path) as f:
        return f.readline().strip()


def get_git_commit():
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).decode().strip()
    except Exception:
        return "unknown"


version = read_version()
if os.environ.get("QKERNELS_NIGHTLY"):
    version = f"{version}.dev{current_date}"
package_name = "qkernels-nightly" if os.environ.get("QKERNELS_NIGHTLY") else "qkernels"

# the extension only builds against an installed torch (no build isolation)
import torch
from torch.utils.cpp_extension import BuildExtension, CUDA_HOME, CUDAExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6;8.9;9.0a")


def get_extensions():
    debug_mode = os.getenv("DEBUG", "0") == "1"
    if debug_mode:
        print("Compiling in debug mode")

    if CUDA_HOME is None:
        raise RuntimeError(
            "qkernels needs the CUDA toolkit (nvcc) to build; set CUDA_HOME or install cuda-toolkit from the nvidia channel"
        )

    cxx_flags = ["-O3" if not debug_mode else "-O0", "-std=c++17", "-fdiagnostics-color=always"]
    nvcc_flags = [
        "-O3" if not debug_mode else "-O0",
        "-std=c++17",
        "--use_fast_math",
        "--expt-relaxed-constexpr",
        "-DCUTLASS_ENABLE_TENSOR_CORE_MMA=1",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "--threads=4",
    ]
    if debug_mode:
        cxx_flags.append("-g")
        nvcc_flags.append("-g")
        extra_link_args = ["-O0", "-g"]
    else:
        extra_link_args = []

    cpp_sources = sorted(glob.glob(os.path.join("csrc", "**", "*.cpp"), recursive=True))
    cuda_sources = sorted(glob.glob(os.path.join("csrc", "**", "*.cu"), recursive=True))
    # the FP8 rowwise kernels use wgmma and only compile for sm_90a
    if "9.0a" not in os.environ["TORCH_CUDA_ARCH_LIST"]:
        cuda_sources = [s for s in cuda_sources if "sm90" not in s]

    return [
        CUDAExtension(
            name="qkernels._C",
            sources=cpp_sources + cuda_sources,
            include_dirs=[os.path.join(ROOT, "csrc"), os.path.join(ROOT, "third_party", "cutlass", "include")],
            extra_compile_args={"cxx": cxx_flags, "nvcc": nvcc_flags},
            extra_link_args=extra_link_args,
            py_limited_api=True,
        )
    ]


with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name=package_name,
    version=version,
    description="Quantized GEMM kernels as torch.compile-friendly custom ops",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/example/qkernels",
    packages=find_packages(exclude=["test", "benchmarks", "third_party"]),
    package_data={"qkernels": ["configs/*.json"]},
    python_requires=">=3.9",
    install_requires=[
        "torch>=2.4",
        "triton>=3.0",
        "packaging",
        "numpy",
    ],
    extras_require={
        "dev": ["pytest", "expecttest", "parameterized", "pre-commit"],
        "bench": ["pandas", "tabulate", "transformers>=4.44"],
    },
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: BSD License",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
    ],
    zip_safe=False,
)
