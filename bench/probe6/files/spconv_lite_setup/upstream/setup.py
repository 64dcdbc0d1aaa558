"""Build script for voxel_ops: scatter/gather and hashing kernels for sparse voxel point-cloud networks.

    FORCE_CUDA=1 pip install -e .          # build the CUDA kernels even without a visible GPU
    WITH_CPU_ONLY=1 pip install -e .       # CPU kernels only (slow, for debugging)
"""
import glob
import os
import os.path as osp
import platform
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

__version__ = "0.4.1"
URL = "https://github.com/example/voxel_ops"

WITH_CUDA = False
if torch.cuda.is_available():
    WITH_CUDA = CUDA_HOME is not None
suffices = ["cpu", "cuda"] if WITH_CUDA else ["cpu"]
if os.getenv("FORCE_CUDA", "0") == "1":
    suffices = ["cuda", "cpu"]
if os.getenv("FORCE_ONLY_CUDA", "0") == "1":
    suffices = ["cuda"]
if os.getenv("WITH_CPU_ONLY", "0") == "1":
    suffices = ["cpu"]

BUILD_DOCS = os.getenv("BUILD_DOCS", "0") == "1"
WITH_SYMBOLS = os.getenv("WITH_SYMBOLS", "0") == "1"


def get_cuda_arch_flags():
    arch_list = os.getenv("TORCH_CUDA_ARCH_LIST")
    if arch_list:
        return []  # torch's BuildExtension honours TORCH_CUDA_ARCH_LIST itself
    flags = []
    for cc in ["70", "75", "80", "86", "89", "90"]:
        flags += ["-gencode", f"arch=compute_{cc},code=sm_{cc}"]
    return flags


def get_extensions():
    extensions = []
    extensions_dir = osp.join("csrc")
    main_files = glob.glob(osp.join(extensions_dir, "*.cpp"))
    main_files = [path for path in main_files if "hip" not in path]

    for main, suffix in zip(main_files * len(suffices), suffices * len(main_files)):
        define_macros = [("WITH_PYTHON", None)]
        undef_macros = []
        if sys.platform == "win32":
            define_macros += [("torchvoxel_EXPORTS", None)]
        extra_compile_args = {"cxx": ["-O3"]}
        if not os.name == "nt":
            extra_compile_args["cxx"] += ["-Wno-sign-compare"]
        extra_link_args = [] if WITH_SYMBOLS else ["-s"]

        info = platform.uname()
        if info.system == "Darwin" and info.machine == "arm64":
            extra_compile_args["cxx"] += ["-arch", "arm64"]
            extra_link_args += ["-arch", "arm64"]

        if suffix == "cuda":
            define_macros += [("WITH_CUDA", None)]
            nvcc_flags = os.getenv("NVCC_FLAGS", "")
            nvcc_flags = [] if nvcc_flags == "" else nvcc_flags.split(" ")
            nvcc_flags += ["-O3", "--expt-relaxed-constexpr", "--use_fast_math"] + get_cuda_arch_flags()
            if torch.version.hip:
                undef_macros += ["__HIP_NO_HALF_CONVERSIONS__"]
            else:
                nvcc_flags += ["--expt-extended-lambda"]
            extra_compile_args["nvcc"] = nvcc_flags

        name = main.split(os.sep)[-1][:-4]
        sources = [main]
        path = osp.join(extensions_dir, "cpu", f"{name}_cpu.cpp")
        if osp.exists(path):
            sources += [path]
        path = osp.join(extensions_dir, "cuda", f"{name}_cuda.cu")
        if suffix == "cuda" and osp.exists(path):
            sources += [path]

        Extension = CppExtension if suffix == "cpu" else CUDAExtension
        extension = Extension(
            f"torch_voxel._{name}_{suffix}",
            sources,
            include_dirs=[extensions_dir],
            define_macros=define_macros,
            undef_macros=undef_macros,
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        )
        extensions += [extension]
    return extensions


install_requires = [
    "numpy",
    "scipy",
    "cumm-cu120>=0.4.11",
]
test_requires = ["pytest", "pytest-cov"]

include_package_data = True
if torch.cuda.is_available() and torch.version.hip:
    include_package_data = False

setup(
    name="torch_voxel",
    version=__version__,
    description="Sparse voxel scatter/gather/hash kernels for PyTorch",
    author="voxel-ops contributors",
    url=URL,
    keywords=["pytorch", "sparse", "voxel", "point-cloud"],
    python_requires=">=3.8",
    install_requires=install_requires,
    extras_require={"test": test_requires},
    ext_modules=get_extensions() if not BUILD_DOCS else [],
    cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)},
    packages=find_packages(),
    include_package_data=include_package_data,
)
