"""ribs-torch: pyribs-compatible QD archives and emitters in PyTorch.

The optional CUDA extension (``ribs_torch._C``) accelerates the nearest-centroid
search of CVTArchive. It is built automatically when a CUDA toolkit is found;
set RIBS_TORCH_BUILD_EXT=0 to skip it (the pure-torch fallback is used then).
"""

import os

from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))


def read(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return f.read()


ext_modules = []
if os.environ.get("RIBS_TORCH_BUILD_EXT", "1") == "1" and CUDA_HOME is not None:
    ext_modules.append(
        CUDAExtension(
            name="ribs_torch._C",
            sources=["ribs_torch/csrc/cvt_nn.cpp", "ribs_torch/csrc/cvt_nn_kernel.cu"],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": ["-O3", "--use_fast_math", "-lineinfo", "-std=c++17"],
            },
        )
    )

setup(
    name="ribs-torch",
    version="0.3.0",
    description="Quality-diversity optimisation on the GPU (pyribs API, PyTorch backend)",
    long_description=read("README.md"),
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("tests", "examples")),
    python_requires=">=3.9",
    install_requires=[
        "torch>=2.0",
        "numpy>=1.22",
        "scikit-learn>=1.1",
        "pandas>=1.5",
        "ribs>=0.6",
    ],
    extras_require={
        "visualize": ["matplotlib>=3.6", "shapely"],
        "cuda": ["cupy-cuda12x>=12.0", "nvidia-ml-py>=12.0"],
        "dev": ["pytest", "pytest-benchmark", "ruff"],
    },
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
