"""Build script for semicrf_amt: event-based piano transcription with a neural semi-CRF.

The semi-CRF forward (log-partition) and Viterbi decoding have a CUDA implementation in
csrc/ that is ~40x faster than the pure PyTorch reference for 88 keys x 4000 frames.
"""
import os
import re
from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.abspath(os.path.dirname(__file__))


def read_version():
    with open(os.path.join(here, "semicrf_amt", "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = ["\']([^"\']+)["\']', f.read(), re.M)
    return m.group(1) if m else "0.0.0"


def get_extensions():
    sources = [
        "csrc/semicrf_binding.cpp",
        "csrc/semicrf_logz_kernel.cu",
        "csrc/semicrf_viterbi_kernel.cu",
    ]
    nvcc_flags = [
        "-O3",
        "--use_fast_math",
        "-lineinfo",
        "-gencode=arch=compute_70,code=sm_70",
        "-gencode=arch=compute_80,code=sm_80",
        "-gencode=arch=compute_86,code=sm_86",
    ]
    return [
        CUDAExtension(
            name="semicrf_amt._C",
            sources=[os.path.join(here, s) for s in sources],
            include_dirs=[os.path.join(here, "csrc")],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
        )
    ]


with open(os.path.join(here, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="semicrf_amt",
    version=read_version(),
    description="Neural semi-CRF for event-based automatic piano transcription",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("tests", "scripts")),
    python_requires=">=3.8",
    install_requires=[
        "numpy",
        "torch>=1.12",
        "torchaudio",
        "mir_eval",
        "pretty_midi",
        "soundfile",
        "pydub",
        "ncls",
    ],
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    entry_points={"console_scripts": ["semicrf-transcribe=semicrf_amt.transcribe:main"]},
    zip_safe=False,
)
