"""Build the PointNet++ CUDA ops used by the ManiSkill2-Learn point-cloud backbones.

    cd maniskill2_learn/networks/ops/pointnet2
    TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6" python setup.py install

The extension needs nvcc from the same CUDA toolkit PyTorch was built with (``torch.version.cuda``).
"""
import glob
import os
import os.path as osp
import subprocess

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

this_dir = osp.dirname(osp.abspath(__file__))
_ext_src_root = osp.join(this_dir, "src")
_ext_sources = glob.glob(osp.join(_ext_src_root, "*.cpp")) + glob.glob(osp.join(_ext_src_root, "*.cu"))
_ext_headers = glob.glob(osp.join(_ext_src_root, "*.h"))

requirements = ["torch>=1.8"]

if os.getenv("TORCH_CUDA_ARCH_LIST") is None:
    os.environ["TORCH_CUDA_ARCH_LIST"] = "6.1;7.0;7.5;8.0;8.6+PTX"


def get_cuda_version():
    if CUDA_HOME is None:
        raise RuntimeError(
            "CUDA_HOME is not set: the pointnet2 ops can only be built on a machine with the CUDA toolkit."
        )
    nvcc = osp.join(CUDA_HOME, "bin", "nvcc")
    out = subprocess.check_output([nvcc, "--version"]).decode()
    return out.strip().split("release ")[-1].split(",")[0]


def get_extra_compile_args():
    nvcc_flags = [
        "-O3",
        "-Xfatbin",
        "-compress-all",
        "-DCUDA_HAS_FP16=1",
        "-D__CUDA_NO_HALF_OPERATORS__",
        "-D__CUDA_NO_HALF_CONVERSIONS__",
        "-D__CUDA_NO_HALF2_OPERATORS__",
    ]
    cuda_version = get_cuda_version()
    if tuple(int(x) for x in cuda_version.split(".")[:2]) >= (11, 0):
        nvcc_flags.append("--expt-relaxed-constexpr")
    return {"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags}


setup(
    name="pointnet2",
    version="3.0.0",
    author="Erik Wijmans, Shaoshuai Shi",
    description="PointNet++ CUDA operators (FPS, ball query, grouping, interpolation)",
    packages=find_packages(),
    install_requires=requirements,
    ext_modules=[
        CUDAExtension(
            name="pointnet2_cuda",
            sources=_ext_sources,
            include_dirs=[_ext_src_root],
            extra_compile_args=get_extra_compile_args(),
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    include_package_data=True,
    zip_safe=False,
)
