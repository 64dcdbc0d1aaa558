#!/usr/bin/env python
"""Build the DCNv2 `_ext` extension (modulated deformable conv + deformable PSROI pooling).

    python setup.py build develop        # in-place, used by CenterNet
    TORCH_CUDA_ARCH_LIST="8.0;8.6" python setup.py build_ext --inplace
"""
import glob
import os
import shutil
import subprocess
import sys

import torch
from setuptools import Command, find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

requirements = ["torch", "torchvision"]
VERSION = "0.1"
THIS_DIR = os.path.dirname(os.path.abspath(__file__))


def _default_arch_list():
    """Compile for the local card if there is one, otherwise for the usual data-centre parts."""
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"{major}.{minor}"
    return "6.0;6.1;7.0;7.5;8.0;8.6+PTX"


def _nvcc_version():
    if CUDA_HOME is None:
        return None
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"]).decode()
    except (OSError, subprocess.CalledProcessError):
        return None
    for token in out.split():
        if token.startswith("V") and token[1:2].isdigit():
            return token[1:]
    return None


def _write_version_file():
    version_path = os.path.join(THIS_DIR, "dcn_version.py")
    with open(version_path, "w") as f:
        f.write(f"__version__ = '{VERSION}'\n")
        f.write(f"torch_version = '{torch.__version__}'\n")
        f.write(f"cuda_version = '{torch.version.cuda}'\n")


class CleanCommand(Command):
    """python setup.py clean_ext: remove build artefacts and the compiled module."""

    user_options = []

    def initialize_options(self):
        pass

    def finalize_options(self):
        pass

    def run(self):
        for path in ["build", "dist", "DCNv2.egg-info"]:
            shutil.rmtree(os.path.join(THIS_DIR, path), ignore_errors=True)
        for so in glob.glob(os.path.join(THIS_DIR, "_ext*.so")):
            os.remove(so)


def get_extensions():
    extensions_dir = os.path.join(THIS_DIR, "src")

    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(extensions_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    os.environ["CC"] = "g++"
    sources = main_file + source_cpu
    extension = CppExtension
    extra_compile_args = {"cxx": ["-O3"]}
    define_macros = []

    if torch.cuda.is_available() and CUDA_HOME is not None:
        extension = CUDAExtension
        sources += source_cuda
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-O3",
            "-DCUDA_HAS_FP16=1",
            "-D__CUDA_NO_HALF_OPERATORS__",
            "-D__CUDA_NO_HALF_CONVERSIONS__",
            "-D__CUDA_NO_HALF2_OPERATORS__",
        ]
        print(f"Compiling DCNv2 with CUDA {_nvcc_version()} for {os.environ['TORCH_CUDA_ARCH_LIST']}")
    else:
        # the CPU kernels are reference implementations and the im2col path is not wired up
        raise NotImplementedError("Cuda is not available")

    sources = [os.path.join(extensions_dir, s) for s in sources]
    include_dirs = [extensions_dir]
    ext_modules = [
        extension(
            "_ext",
            sources,
            include_dirs=include_dirs,
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]
    return ext_modules


if __name__ == "__main__":
    if "TORCH_CUDA_ARCH_LIST" not in os.environ:
        os.environ["TORCH_CUDA_ARCH_LIST"] = _default_arch_list()
    if sys.version_info < (3, 6):
        raise RuntimeError("DCNv2 needs Python >= 3.6")
    _write_version_file()

    setup(
        name="DCNv2",
        version=VERSION,
        author="charlesshang",
        url="https://github.com/charlesshang/DCNv2",
        description="deformable convolutional networks",
        packages=find_packages(exclude=("configs", "tests")),
        install_requires=requirements,
        ext_modules=get_extensions(),
        cmdclass={
            "build_ext": torch.utils.cpp_extension.BuildExtension,
            "clean_ext": CleanCommand,
        },
        zip_safe=False,
    )
