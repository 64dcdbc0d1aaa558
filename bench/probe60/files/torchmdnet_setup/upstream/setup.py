# Copyright Universitat Pompeu Fabra 2020-2023  https://www.compscience.org
# Distributed under the MIT License.
# (See accompanying file README.md file or copy at http://opensource.org/licenses/MIT)

import subprocess
from setuptools import setup, find_packages
import torch
from torch.utils.cpp_extension import (
    BuildExtension,
    CUDAExtension,
    CppExtension,
    include_paths,
    CUDA_HOME,
)
import os
import sys

is_windows = sys.platform == "win32"

try:
    version = (
        subprocess.check_output(["git", "describe", "--abbrev=0", "--tags"])
        .strip()
        .decode("utf-8")
    )
except Exception:
    print("Failed to retrieve the current version, defaulting to 0")
    version = "0"

# If WITH_CUDA is defined
if os.environ.get("WITH_CUDA", "0") == "1":
    use_cuda = True
else:
    use_cuda = torch.cuda._is_compiled() and CUDA_HOME is not None


def set_torch_cuda_arch_list():
    """Set the CUDA arch list according to the architectures the current torch installation was compiled for.
    This function is a no-op if the environment variable TORCH_CUDA_ARCH_LIST is already set or if torch was not compiled with CUDA support.
    """
    if use_cuda and not os.environ.get("TORCH_CUDA_ARCH_LIST"):
        arch_flags = torch._C._cuda_getArchFlags()
        sm_versions = [x[3:] for x in arch_flags.split() if x.startswith("sm_")]
        formatted_versions = ";".join([f"{y[0]}.{y[1]}" for y in sm_versions])
        formatted_versions += "+PTX"
        os.environ["TORCH_CUDA_ARCH_LIST"] = formatted_versions


set_torch_cuda_arch_list()

extension_root = os.path.join("torchmdnet", "extensions")
neighbor_sources = ["neighbors_cpu.cpp"]
if use_cuda:
    neighbor_sources.append("neighbors_cuda.cu")
neighbor_sources = [
    os.path.join(extension_root, "neighbors", source) for source in neighbor_sources
]

runtime_library_dirs = None
if os.name == "posix":
    runtime_library_dirs = []
    if use_cuda and CUDA_HOME is not None:
        runtime_library_dirs.append(os.path.join(CUDA_HOME, "lib64"))

ExtensionType = CppExtension if not use_cuda else CUDAExtension
extensions = ExtensionType(
    name="torchmdnet.extensions.torchmdnet_extensions",
    sources=[os.path.join(extension_root, "extensions.cpp")] + neighbor_sources,
    include_dirs=include_paths(),
    runtime_library_dirs=runtime_library_dirs,
    define_macros=[("WITH_CUDA", 1)] if use_cuda else [],
    extra_compile_args={
        "cxx": ["-std=c++17"],
        "nvcc": ["-std=c++17", "--expt-relaxed-constexpr", "-lineinfo"],
    },
)

kwargs = {}
if not is_windows:
    kwargs["cmdclass"] = {
        "build_ext": BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)
    }

if __name__ == "__main__":
    setup(
        name="torchmd-net",
        version=version,
        packages=find_packages(),
        ext_modules=[extensions],
        include_package_data=True,
        entry_points={
            "console_scripts": [
                "torchmd-train = torchmdnet.scripts.train:main",
                "torchmd-train-memory = torchmdnet.scripts.train_memory:main",
            ]
        },
        package_data={"torchmdnet": ["extensions/*.cpp", "extensions/*.cu", "extensions/*.cuh", "extensions/neighbors/*"]},
        python_requires=">=3.9",
        **kwargs,
    )
