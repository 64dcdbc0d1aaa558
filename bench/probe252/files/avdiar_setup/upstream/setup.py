#!/usr/bin/env python
"""avdiar: audio-visual speaker diarization / active speaker detection toolkit.

The package is pure Python except for a small CUDA extension (``avdiar._C``)
holding the face-box NMS kernel used by the RetinaFace front-end. Set
AVDIAR_NO_EXT=1 to skip it (the code falls back to torchvision.ops.nms).
"""
import os
import glob

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))
version = "0.4.1"


def get_extensions():
    if os.environ.get("AVDIAR_NO_EXT", "0") == "1":
        return []

    extensions_dir = os.path.join(HERE, "csrc")
    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    sources = main_file
    extension = CppExtension
    extra_compile_args = {"cxx": ["-O3", "-std=c++17"]}
    define_macros = []

    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        extension = CUDAExtension
        sources += source_cuda
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-O3",
            "-DCUDA_HAS_FP16=1",
            "-D__CUDA_NO_HALF_OPERATORS__",
            "-D__CUDA_NO_HALF_CONVERSIONS__",
            "-D__CUDA_NO_HALF2_OPERATORS__",
            "-gencode=arch=compute_70,code=sm_70",
            "-gencode=arch=compute_80,code=sm_80",
            "-gencode=arch=compute_86,code=sm_86",
        ]
    else:
        print("[avdiar] CUDA not found, building the CPU-only NMS")

    return [
        extension(
            "avdiar._C",
            sources,
            include_dirs=[extensions_dir],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]


with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="avdiar",
    version=version,
    description="Audio-visual speaker diarization and active speaker detection",
    long_description=long_description,
    long_description_content_type="text/markdown",
    author="avdiar contributors",
    python_requires=">=3.8",
    packages=find_packages(exclude=("tests", "configs", "scripts")),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    entry_points={
        "console_scripts": [
            "avdiar-diarize=avdiar.pipeline.diarize:main",
            "avdiar-batch=tools.batch_infer_multigpu:main",
        ]
    },
    zip_safe=False,
)
