import os
import subprocess
from typing import List

from setuptools import find_packages, setup

THIS_DIR = os.path.dirname(os.path.abspath(__file__))

# Build the fused CUDA kernels (adaLN modulate, RMSNorm) together with the package.
# Set BUILD_EXT=0 to install the pure-PyTorch/Triton version only.
BUILD_EXT = int(os.environ.get("BUILD_EXT", "1"))


def fetch_requirements(path) -> List[str]:
    """
    This function reads the requirements file.

    Args:
        path (str): the path to the requirements file.

    Returns:
        The lines in the requirements file.
    """
    with open(path, "r") as fd:
        return [r.strip() for r in fd.readlines() if r.strip() and not r.startswith(("#", "--"))]


def fetch_readme() -> str:
    """
    This function reads the README.md file in the current directory.

    Returns:
        The lines in the README file.
    """
    with open("README.md", encoding="utf-8") as f:
        return f.read()


def get_version() -> str:
    with open(os.path.join(THIS_DIR, "opendit", "version.txt")) as f:
        return f.read().strip()


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    bare_metal_version = output[release_idx].split(",")[0]
    return raw_output, bare_metal_version


def check_cuda_torch_binary_vs_bare_metal(cuda_dir):
    import torch

    raw_output, bare_metal_version = get_cuda_bare_metal_version(cuda_dir)
    torch_binary_version = torch.version.cuda
    if bare_metal_version.split(".")[0] != torch_binary_version.split(".")[0]:
        raise RuntimeError(
            "Cuda extensions are being compiled with a version of Cuda that does "
            "not match the version used to compile Pytorch binaries.  "
            f"Pytorch binaries were compiled with Cuda {torch_binary_version}.\n"
            "In some cases, a minor-version mismatch will not cause later errors."
        )


ext_modules = []
cmdclass = {}

if BUILD_EXT:
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

    if CUDA_HOME is None:
        raise RuntimeError("BUILD_EXT=1 requires the CUDA toolkit (nvcc); set CUDA_HOME or BUILD_EXT=0.")
    check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)

    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;8.0;8.6;9.0")
    cc_flag = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]

    ext_modules.append(
        CUDAExtension(
            name="opendit_kernels",
            sources=[
                "csrc/opendit_kernels.cpp",
                "csrc/fused_adaln_kernel.cu",
                "csrc/rms_norm_kernel.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": ["-O3", "--use_fast_math", "-U__CUDA_NO_HALF_OPERATORS__",
                         "-U__CUDA_NO_HALF_CONVERSIONS__", "--expt-relaxed-constexpr"] + cc_flag,
            },
        )
    )
    cmdclass = {"build_ext": BuildExtension}


setup(
    name="opendit",
    version=get_version(),
    packages=find_packages(
        exclude=(
            "videos",
            "tests",
            "figure",
            "*.egg-info",
        )
    ),
    description="OpenDiT: An Easy, Fast and Memory-Efficent System for DiT Training and Inference",
    long_description=fetch_readme(),
    long_description_content_type="text/markdown",
    license="Apache Software License 2.0",
    install_requires=fetch_requirements("requirements.txt"),
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    python_requires=">=3.8",
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: Apache Software License",
        "Environment :: GPU :: NVIDIA CUDA",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: System :: Distributed Computing",
    ],
)
