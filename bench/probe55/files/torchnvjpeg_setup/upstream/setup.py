#!/usr/bin/env python
"""Build torchnvjpeg: batched JPEG decoding into CUDA tensors with nvJPEG.

    pip install -v .                      # uses the CUDA toolkit torch was built with
    TORCH_CUDA_ARCH_LIST="8.0" pip install -v .

The extension links against libnvjpeg from the CUDA toolkit (CUDA >= 11.0 for the
hardware A100 decoder backend, NVJPEG_BACKEND_HARDWARE).
"""
import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

VERSION = "0.2.0"
ROOT = os.path.dirname(os.path.abspath(__file__))

if CUDA_HOME is None:
    raise RuntimeError(
        "torchnvjpeg needs the CUDA toolkit (nvcc + libnvjpeg); set CUDA_HOME or install cuda-toolkit"
    )

# Build for the common data-centre parts unless the user narrowed it down.
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;9.0+PTX")


def nvcc_version():
    out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"]).decode()
    release = out.split("release ")[1].split(",")[0]
    return tuple(int(x) for x in release.split("."))


def get_version():
    sha = "unknown"
    try:
        sha = subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=ROOT).decode("ascii").strip()
    except Exception:
        pass
    return f"{VERSION}+{sha[:7]}" if sha != "unknown" else VERSION


def write_version_file(version):
    with open(os.path.join(ROOT, "torchnvjpeg", "version.py"), "w") as f:
        f.write(f'__version__ = "{version}"\n')


def get_extensions():
    sources = sorted(glob.glob(os.path.join("csrc", "*.cpp")) + glob.glob(os.path.join("csrc", "*.cu")))
    define_macros = [("WITH_CUDA", None)]
    if nvcc_version() >= (11, 0):
        define_macros.append(("NVJPEG_HW_BACKEND", None))

    ext_modules = [
        CUDAExtension(
            name="torchnvjpeg._C",
            sources=sources,
            include_dirs=[os.path.join(ROOT, "csrc"), os.path.join(CUDA_HOME, "include")],
            library_dirs=[os.path.join(CUDA_HOME, "lib64")],
            libraries=["nvjpeg", "cudart", "cuda"],
            define_macros=define_macros,
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": ["-O3", "--use_fast_math", "-std=c++17", "--expt-relaxed-constexpr"],
            },
        )
    ]
    return ext_modules


if __name__ == "__main__":
    version = get_version()
    write_version_file(version)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        long_description = f.read()

    setup(
        name="torchnvjpeg",
        version=version,
        description="Batched nvJPEG decoding into PyTorch CUDA tensors",
        long_description=long_description,
        long_description_content_type="text/markdown",
        packages=find_packages(exclude=("tests", "benchmarks")),
        ext_modules=get_extensions(),
        cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)},
        python_requires=">=3.8",
        install_requires=["torch>=1.10", "numpy"],
        extras_require={"bench": ["pillow", "torchvision"]},
        classifiers=[
            "Programming Language :: Python :: 3",
            "Environment :: GPU :: NVIDIA CUDA",
            "License :: OSI Approved :: MIT License",
        ],
        zip_safe=False,
    )
