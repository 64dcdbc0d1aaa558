"""Build the LLTM CUDA extension used by the custom C++/CUDA extensions tutorial.

    python setup.py install            # builds lltm_cuda into site-packages
    python setup.py build_ext --inplace

The kernel lives in lltm_cuda_kernel.cu; lltm_cuda.cpp holds the pybind11 bindings and
the input checks (CHECK_CUDA / CHECK_CONTIGUOUS).
"""
import os
import subprocess
import sys

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

HERE = os.path.dirname(os.path.abspath(__file__))


def _nvcc_version():
    if not CUDA_HOME:
        return None
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"]).decode()
    except (OSError, subprocess.CalledProcessError):
        return None
    for token in out.split():
        if token.startswith("V") and token[1:2].isdigit():
            return token[1:]
    return None


if CUDA_HOME is None:
    sys.exit("CUDA_HOME is not set and nvcc was not found: the lltm_cuda extension needs the CUDA toolkit. "
             "Use the pure-Python LLTM in ../python or the C++ one in ../cpp instead.")

print(f"building lltm_cuda with nvcc {_nvcc_version()} from {CUDA_HOME}")

# Build for the usual training cards unless the user asked for something else.
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6+PTX")

extra_compile_args = {
    "cxx": ["-O3", "-std=c++17"],
    "nvcc": [
        "-O3",
        "--use_fast_math",
        "-lineinfo",
        "--expt-relaxed-constexpr",
    ],
}

if os.environ.get("LLTM_DEBUG", "0") == "1":
    extra_compile_args["cxx"] = ["-g", "-O0", "-std=c++17"]
    extra_compile_args["nvcc"] = ["-G", "-g", "-O0"]

setup(
    name="lltm_cuda",
    version="0.2.0",
    description="Long-Long-Term-Memory (LLTM) cell as a custom CUDA extension",
    author="PyTorch tutorial authors",
    python_requires=">=3.8",
    install_requires=["torch>=1.13"],
    ext_modules=[
        CUDAExtension(
            name="lltm_cuda",
            sources=[
                "lltm_cuda.cpp",
                "lltm_cuda_kernel.cu",
            ],
            extra_compile_args=extra_compile_args,
        ),
    ],
    cmdclass={
        "build_ext": BuildExtension.with_options(use_ninja=True),
    },
    zip_safe=False,
)
