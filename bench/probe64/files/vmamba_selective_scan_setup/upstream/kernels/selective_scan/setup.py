# Modified from https://github.com/state-spaces/mamba (csrc/selective_scan) for VMamba / ChangeMamba
import os
import subprocess
import sys
from pathlib import Path

import torch
from packaging.version import parse, Version
from setuptools import find_packages, setup
from torch.utils.cpp_extension import (
    BuildExtension,
    CUDA_HOME,
    CUDAExtension,
    CppExtension,
)

# ninja build does not work unless include_dirs are abs path
this_dir = os.path.dirname(os.path.abspath(__file__))

# FORCE_BUILD: force a fresh build locally, instead of attempting to find prebuilt wheels
FORCE_BUILD = os.getenv("SELECTIVE_SCAN_FORCE_BUILD", "FALSE") == "TRUE"
# For CI, we want the option to build with C++11 ABI since the nvcr images use C++11 ABI
FORCE_CXX11_ABI = os.getenv("SELECTIVE_SCAN_FORCE_CXX11_ABI", "FALSE") == "TRUE"

MODES = ["oflex"]
# MODES = ["core", "ndstate", "oflex"]


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    bare_metal_version = parse(output[release_idx].split(",")[0])
    return raw_output, bare_metal_version


def check_if_cuda_home_none(global_option: str) -> None:
    if CUDA_HOME is not None:
        return
    # warn instead of error because user could be downloading prebuilt wheels, so nvcc won't be necessary
    # in that case.
    raise RuntimeError(
        f"{global_option} was requested, but nvcc was not found.  Are you sure your environment has nvcc available?  "
        "If you're installing within a container from https://hub.docker.com/r/pytorch/pytorch, "
        "only images whose names contain 'devel' will provide nvcc."
    )


def append_nvcc_threads(nvcc_extra_args):
    return nvcc_extra_args + ["--threads", "4"]


cmdclass = {}
ext_modules = []

print("\n\ntorch.__version__  = {}\n\n".format(torch.__version__))
TORCH_MAJOR = int(torch.__version__.split(".")[0])
TORCH_MINOR = int(torch.__version__.split(".")[1])

check_if_cuda_home_none("selective_scan")
# Check, if CUDA11 is installed for compute capability 8.0
cc_flag = []
_, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
if bare_metal_version < Version("11.6"):
    raise RuntimeError("selective scan is only supported on CUDA 11.6 and above")

cc_flag.append("-gencode")
cc_flag.append("arch=compute_70,code=sm_70")
cc_flag.append("-gencode")
cc_flag.append("arch=compute_80,code=sm_80")
if bare_metal_version >= Version("11.8"):
    cc_flag.append("-gencode")
    cc_flag.append("arch=compute_90,code=sm_90")

# HACK: The compiler flag -D_GLIBCXX_USE_CXX11_ABI is set to be the same as
# torch._C._GLIBCXX_USE_CXX11_ABI
if FORCE_CXX11_ABI:
    torch._C._GLIBCXX_USE_CXX11_ABI = True

sources = {
    "core": [
        "csrc/selective_scan/cus/selective_scan.cpp",
        "csrc/selective_scan/cus/selective_scan_core_fwd.cu",
        "csrc/selective_scan/cus/selective_scan_core_bwd.cu",
    ],
    "nrow": [
        "csrc/selective_scan/cusnrow/selective_scan_nrow.cpp",
        "csrc/selective_scan/cusnrow/selective_scan_core_fwd.cu",
        "csrc/selective_scan/cusnrow/selective_scan_core_bwd.cu",
    ],
    "ndstate": [
        "csrc/selective_scan/cusndstate/selective_scan_ndstate.cpp",
        "csrc/selective_scan/cusndstate/selective_scan_core_fwd.cu",
        "csrc/selective_scan/cusndstate/selective_scan_core_bwd.cu",
    ],
    "oflex": [
        "csrc/selective_scan/cusoflex/selective_scan_oflex.cpp",
        "csrc/selective_scan/cusoflex/selective_scan_core_fwd.cu",
        "csrc/selective_scan/cusoflex/selective_scan_core_bwd.cu",
    ],
}

names = {
    "core": "selective_scan_cuda_core",
    "nrow": "selective_scan_cuda_nrow",
    "ndstate": "selective_scan_cuda_ndstate",
    "oflex": "selective_scan_cuda_oflex",
}

for MODE in MODES:
    ext_modules.append(
        CUDAExtension(
            name=names.get(MODE, None),
            sources=sources.get(MODE, None),
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": append_nvcc_threads(
                    [
                        "-O3",
                        "-std=c++17",
                        "-U__CUDA_NO_HALF_OPERATORS__",
                        "-U__CUDA_NO_HALF_CONVERSIONS__",
                        "-U__CUDA_NO_BFLOAT16_OPERATORS__",
                        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
                        "-U__CUDA_NO_BFLOAT162_OPERATORS__",
                        "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
                        "--expt-relaxed-constexpr",
                        "--expt-extended-lambda",
                        "--use_fast_math",
                        "--ptxas-options=-v",
                        "-lineinfo",
                    ]
                    + cc_flag
                ),
            },
            include_dirs=[Path(this_dir) / "csrc" / "selective_scan"],
        )
    )

setup(
    name="selective_scan",
    version="0.0.2",
    packages=[],
    author="Tri Dao, Albert Gu, $@#Anonymous#@$ ",
    author_email="tri@tridao.me, agu@cs.cmu.edu, $@#Anonymous#EMAIL@$",
    description="selective scan",
    long_description="",
    url="https://github.com/state-spaces/mamba",
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.7",
    install_requires=[
        "torch",
        "packaging",
        "ninja",
        "einops",
    ],
)
