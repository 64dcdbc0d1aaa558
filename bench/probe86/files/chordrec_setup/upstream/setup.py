#!/usr/bin/env python
"""chordrec: chord recognition and beat tracking models with GPU decoders.

    pip install -e .                      # builds chordrec._viterbi_cuda
    CHORDREC_NO_EXT=1 pip install -e .    # pure-python install (slow decoding)
"""
import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))
version = "0.4.1"


def git_hash():
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=here).decode().strip()
    except Exception:
        return "unknown"


def write_version_file():
    with open(os.path.join(here, "chordrec", "version.py"), "w") as f:
        f.write(f'__version__ = "{version}"\n')
        f.write(f'git_version = "{git_hash()}"\n')
        f.write(f'torch_version = "{torch.__version__}"\n')
        f.write(f'cuda_version = "{torch.version.cuda}"\n')


def get_extensions():
    if os.environ.get("CHORDREC_NO_EXT", "0") == "1":
        return []
    if CUDA_HOME is None:
        raise RuntimeError(
            "CUDA_HOME is not set: chordrec's Viterbi decoder needs nvcc. "
            "Set CHORDREC_NO_EXT=1 to install without it.")

    # build for the common data-centre GPUs unless the user says otherwise
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;9.0+PTX")

    src_dir = os.path.join("chordrec", "csrc")
    sources = glob.glob(os.path.join(src_dir, "*.cpp")) + glob.glob(os.path.join(src_dir, "*.cu"))
    nvcc_flags = [
        "-O3",
        "--use_fast_math",
        "-lineinfo",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "--expt-relaxed-constexpr",
    ]
    return [
        CUDAExtension(
            name="chordrec._viterbi_cuda",
            sources=sources,
            include_dirs=[os.path.abspath(src_dir)],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
        )
    ]


if __name__ == "__main__":
    write_version_file()
    with open(os.path.join(here, "README.md"), encoding="utf-8") as f:
        long_description = f.read()

    setup(
        name="chordrec",
        version=version,
        description="Chord recognition, beat and downbeat tracking in PyTorch",
        long_description=long_description,
        long_description_content_type="text/markdown",
        author="chordrec contributors",
        license="MIT",
        python_requires=">=3.8",
        packages=find_packages(exclude=("tests", "scripts", "notebooks")),
        package_data={"chordrec": ["configs/*.yaml", "csrc/*.h"]},
        install_requires=[
            "torch>=2.0",
            "torchaudio>=2.0",
            "numpy",
            "scipy",
            "librosa>=0.10",
            "mir_eval>=0.7",
            "madmom @ git+https://github.com/CPJKU/madmom",
            "nnAudio>=0.3.2",
            "pyyaml",
            "tqdm",
            "cupy-cuda12x>=12.0",
        ],
        extras_require={
            "dev": ["pytest", "black", "flake8"],
            "dali": ["nvidia-dali-cuda120"],
        },
        ext_modules=get_extensions(),
        cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
        zip_safe=False,
        entry_points={
            "console_scripts": [
                "chordrec-predict=chordrec.cli:predict",
                "chordrec-train=chordrec.cli:train",
            ]
        },
        classifiers=[
            "Programming Language :: Python :: 3",
            "Environment :: GPU :: NVIDIA CUDA",
            "Topic :: Multimedia :: Sound/Audio :: Analysis",
        ],
    )
