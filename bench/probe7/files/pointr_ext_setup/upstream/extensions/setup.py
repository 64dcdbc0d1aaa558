# Build the point-cloud operator library used by the completion models:
#   chamfer distance, earth mover's distance (auction), gridding / gridding-reverse, cubic feature sampling.
#
#   cd extensions && python setup.py install --user
#
# Set TORCH_CUDA_ARCH_LIST to the architectures you need to keep the build short, e.g. "8.0;8.6".
import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

HERE = os.path.dirname(os.path.abspath(__file__))


def get_cuda_version():
    if not CUDA_HOME:
        return None
    out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "-V"], universal_newlines=True)
    release = out.split("release ")[1].split(",")[0]
    return tuple(int(x) for x in release.split("."))


def check_env():
    if not torch.cuda.is_available() and os.environ.get("FORCE_CUDA", "0") != "1":
        sys.exit("CUDA is not available; export FORCE_CUDA=1 to cross-compile the extensions on a CPU node.")
    if CUDA_HOME is None:
        sys.exit("CUDA_HOME is not set and nvcc was not found.")
    if get_cuda_version() < (11, 3):
        sys.exit("CUDA >= 11.3 is required to build pcn_ext")
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;8.9;9.0+PTX")


def nvcc_flags():
    flags = [
        "-O3",
        "--use_fast_math",
        "-DCUDA_HAS_FP16=1",
        "-D__CUDA_NO_HALF_OPERATORS__",
        "-D__CUDA_NO_HALF_CONVERSIONS__",
        "-D__CUDA_NO_HALF2_OPERATORS__",
        "--expt-relaxed-constexpr",
    ]
    if os.environ.get("PCN_EXT_LINEINFO", "0") == "1":
        flags.append("-lineinfo")
    return flags


def make_extension(name, subdir):
    src_dir = os.path.join(HERE, subdir, "src")
    sources = sorted(glob.glob(os.path.join(src_dir, "*.cpp")) + glob.glob(os.path.join(src_dir, "*.cu")))
    return CUDAExtension(
        name=name,
        sources=sources,
        include_dirs=[os.path.join(HERE, "common", "include")],
        define_macros=[("WITH_CUDA", None), ("TORCH_EXTENSION_NAME", name.split(".")[-1])],
        extra_compile_args={
            "cxx": ["-O3", "-std=c++17"],
            "nvcc": nvcc_flags(),
        },
    )


def get_extensions():
    check_env()
    return [
        make_extension("chamfer_dist._C", "chamfer_dist"),
        make_extension("emd._C", "emd"),
        make_extension("gridding._C", "gridding"),
        make_extension("cubic_feature_sampling._C", "cubic_feature_sampling"),
    ]


with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="pcn_ext",
    version="1.2.0",
    description="Point cloud completion operators (chamfer, EMD, gridding) for PyTorch",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=find_packages(include=["chamfer_dist", "emd", "gridding", "cubic_feature_sampling"]),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    python_requires=">=3.8",
    install_requires=[
        "torch>=1.12",
        "numpy",
        "open3d>=0.16",
        "timm",
        "easydict",
        "ninja",
    ],
    extras_require={
        "test": ["pytest", "scipy"],
    },
    zip_safe=False,
)
