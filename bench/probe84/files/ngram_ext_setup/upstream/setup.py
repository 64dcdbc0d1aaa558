# Build script for the CUDA n-gram hashing / suffix-match extension used by the
# exact-substring deduplication stage (gpu_ngram._C).
#
#   TORCH_CUDA_ARCH_LIST="8.0;9.0" pip install -e . --no-build-isolation
#
import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))
PACKAGE_NAME = "gpu_ngram"
VERSION = "0.3.1"


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    return raw_output, int(release[0]), int(release[1][0])


def check_cuda_torch_binary_vs_bare_metal(cuda_dir):
    raw_output, bare_metal_major, bare_metal_minor = get_cuda_bare_metal_version(cuda_dir)
    torch_binary_major = torch.version.cuda.split(".")[0]
    torch_binary_minor = torch.version.cuda.split(".")[1]
    print("\nCompiling cuda extensions with")
    print(raw_output + "from " + cuda_dir + "/bin\n")
    if (bare_metal_major != int(torch_binary_major)) or (bare_metal_minor != int(torch_binary_minor)):
        raise RuntimeError(
            "Cuda extensions are being compiled with a version of Cuda that does "
            "not match the version used to compile Pytorch binaries.  "
            "Pytorch binaries were compiled with Cuda {}.\n".format(torch.version.cuda)
        )


def get_extensions():
    extensions_dir = os.path.join(this_dir, "csrc")
    main_sources = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    cuda_sources = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    if os.environ.get("GPU_NGRAM_CPU_ONLY", "0") == "1":
        return [
            CppExtension(
                f"{PACKAGE_NAME}._C",
                sources=main_sources,
                extra_compile_args={"cxx": ["-O3", "-fopenmp"]},
                extra_link_args=["-fopenmp"],
            )
        ]

    if CUDA_HOME is None:
        raise RuntimeError("CUDA_HOME is not set; the CUDA toolkit (nvcc) is required to build gpu_ngram")
    check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)

    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;8.0;8.6;9.0")
    cc_flag = []
    for arch in ("80", "90"):
        cc_flag += ["-gencode", f"arch=compute_{arch},code=sm_{arch}"]

    nvcc_flags = [
        "-O3",
        "--use_fast_math",
        "-std=c++17",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-lineinfo",
    ] + cc_flag

    return [
        CUDAExtension(
            f"{PACKAGE_NAME}._C",
            sources=main_sources + cuda_sources,
            include_dirs=[extensions_dir, os.path.join(this_dir, "third_party", "cub")],
            define_macros=[("WITH_CUDA", None)],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
            libraries=["cudart"],
        )
    ]


setup(
    name=PACKAGE_NAME,
    version=VERSION,
    author="Data Curation Team",
    description="GPU rolling-hash n-gram extraction and suffix-array match counting for exact-substring dedup",
    packages=find_packages(exclude=("tests", "benchmarks")),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    python_requires=">=3.9",
    install_requires=[
        "torch>=2.1",
        "numpy",
        "cupy-cuda12x>=12.0",
        "nvidia-ml-py",
    ],
    extras_require={"test": ["pytest", "datasketch"]},
    zip_safe=False,
)
