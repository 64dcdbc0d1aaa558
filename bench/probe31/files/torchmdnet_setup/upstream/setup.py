# Copyright Universitat Pompeu Fabra 2020-2023  https://www.compscience.org
# Distributed under the MIT License.
# (See accompanying file README.md file or copy at http://opensource.org/licenses/MIT)

import os
import subprocess
import sys

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import (
    BuildExtension,
    CppExtension,
    CUDAExtension,
    include_paths,
)

ROOT = os.path.dirname(os.path.abspath(__file__))


def git_version():
    try:
        out = subprocess.check_output(
            ["git", "describe", "--tags", "--always"], cwd=ROOT, stderr=subprocess.DEVNULL
        )
        version = out.strip().decode("ascii")
        if version.startswith("v"):
            version = version[1:]
        return version.replace("-", "+", 1).replace("-", ".")
    except Exception:
        return "0.0.0+unknown"


def write_version_file(version):
    path = os.path.join(ROOT, "torchmdnet", "_version.py")
    with open(path, "w") as f:
        f.write(f'__version__ = "{version}"\n')


def set_torch_cuda_arch_list():
    """Build fat binaries for every architecture we support unless the user chose some."""
    if "TORCH_CUDA_ARCH_LIST" in os.environ:
        return
    if os.environ.get("ACCELERATOR", "").startswith("cu"):
        os.environ["TORCH_CUDA_ARCH_LIST"] = "6.0;7.0;7.5;8.0;8.6;8.9;9.0+PTX"
    elif torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"


def want_cuda():
    # CPU_ONLY=1 forces a CPU build even on a machine with a CUDA toolkit.
    if os.environ.get("CPU_ONLY", "0") == "1":
        return False
    return torch.cuda._is_compiled()


use_cuda = want_cuda()
if use_cuda:
    set_torch_cuda_arch_list()

ext_dir = os.path.join("torchmdnet", "extensions")
sources = [
    os.path.join(ext_dir, "extensions.cpp"),
    os.path.join(ext_dir, "neighbors", "neighbors_cpu.cpp"),
]
if use_cuda:
    sources += [
        os.path.join(ext_dir, "neighbors", "neighbors_cuda.cu"),
        os.path.join(ext_dir, "neighbors", "neighbors_cuda_cell.cu"),
    ]

define_macros = [("WITH_CUDA", 1)] if use_cuda else []

extra_compile_args = {"cxx": ["-O3", "-std=c++17"]}
if use_cuda:
    extra_compile_args["nvcc"] = [
        "-O3",
        "-std=c++17",
        "--use_fast_math",
        "--expt-relaxed-constexpr",
        "-lineinfo",
    ]

ExtensionClass = CUDAExtension if use_cuda else CppExtension

extensions = ExtensionClass(
    name="torchmdnet.extensions.torchmdnet_extensions",
    sources=sources,
    include_dirs=include_paths(),
    define_macros=define_macros,
    extra_compile_args=extra_compile_args,
)


class BuildExtWithCompileCommands(BuildExtension):
    """Same as BuildExtension but keeps ninja's compile_commands.json for clangd."""

    def build_extensions(self):
        if not os.environ.get("MAX_JOBS"):
            os.environ["MAX_JOBS"] = str(max(1, (os.cpu_count() or 2) // 2))
        super().build_extensions()


if __name__ == "__main__":
    version = git_version()
    write_version_file(version)
    print(f"building torchmdnet {version} ({'CUDA' if use_cuda else 'CPU-only'} extensions)", file=sys.stderr)
    setup(
        name="torchmd-net",
        version=version,
        description="State-of-the-art neural network potentials in PyTorch",
        packages=find_packages(exclude=["tests", "benchmarks"]),
        ext_modules=[extensions],
        cmdclass={"build_ext": BuildExtWithCompileCommands.with_options(use_ninja=True)},
        include_package_data=True,
        entry_points={
            "console_scripts": [
                "torchmd-train = torchmdnet.scripts.train:main",
            ]
        },
        install_requires=[
            "torch>=2.0",
            "lightning>=2.0",
            "torch_geometric",
            "h5py",
            "ase",
            "tqdm",
        ],
        python_requires=">=3.9",
    )
