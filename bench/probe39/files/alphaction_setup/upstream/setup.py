#!/usr/bin/env python
"""AlphAction: asynchronous interaction aggregation for spatio-temporal action detection.

Builds the alphaction._C extension (ROIAlign3d / ROIPool3d / sigmoid focal loss / NMS)
and the optional detector extension used by the person detector (YOLOv3 NMS).
"""
import glob
import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

requirements = [
    "torch>=1.4",
    "torchvision",
    "yacs",
    "tqdm",
    "opencv-python",
    "av",
    "pyyaml",
    "scipy",
    "cython",
    "cython_bbox",
    "gdown",
]


def get_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    extensions_dir = os.path.join(this_dir, "alphaction", "csrc")

    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(extensions_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    sources = main_file + source_cpu
    extension = CppExtension

    extra_compile_args = {"cxx": ["-O3"]}
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
        ]

    sources = [os.path.join(extensions_dir, s) for s in sources]

    include_dirs = [extensions_dir]

    ext_modules = [
        extension(
            "alphaction._C",
            sources,
            include_dirs=include_dirs,
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]

    return ext_modules


def get_detector_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    extensions_dir = os.path.join(this_dir, "detector", "nms")
    source_cpu = glob.glob(os.path.join(extensions_dir, "src", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "src", "*.cu"))
    if CUDA_HOME is None or os.getenv("ALPHACTION_CPU_ONLY", "0") == "1":
        return [
            CppExtension("detector.nms.soft_nms_cpu", source_cpu, extra_compile_args={"cxx": ["-O3"]})
        ]
    return [
        CppExtension("detector.nms.soft_nms_cpu", source_cpu, extra_compile_args={"cxx": ["-O3"]}),
        CUDAExtension("detector.nms.nms_cuda", source_cuda,
                      extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3"]}),
    ]


setup(
    name="alphaction",
    version="0.0.0",
    author="yelantf",
    url="https://github.com/MVIG-SJTU/AlphAction",
    description="Spatio-temporal action localization in PyTorch",
    packages=find_packages(exclude=("config_files", "demo", "tests")),
    install_requires=requirements,
    ext_modules=get_extensions() + get_detector_extensions(),
    cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension},
)
