"""Build script for qtoolkit (quantization / deployment toolkit).

    pip install -e .            # builds the CUDA kernels (needs nvcc)
    QTOOLKIT_NO_CUDA=1 pip install -e .   # pure-python install
"""
import os
import subprocess
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).parent
NO_CUDA = os.environ.get("QTOOLKIT_NO_CUDA", "0") == "1"


def get_version():
    version = (ROOT / "qtoolkit" / "VERSION").read_text().strip()
    try:
        sha = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).decode().strip()
        version += f"+{sha}"
    except Exception:
        pass
    return version


def cuda_arch_flags():
    archs = os.environ.get("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;8.9;9.0")
    flags = []
    for a in archs.split(";"):
        num = a.replace(".", "")
        flags += ["-gencode", f"arch=compute_{num},code=sm_{num}"]
    return flags


ext_modules, cmdclass = [], {}
if not NO_CUDA:
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    ext_modules.append(
        CUDAExtension(
            name="quant_cuda",
            sources=["csrc/quant_cuda.cpp", "csrc/quant_cuda_kernel.cu"],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": ["-O3", "--use_fast_math", "-lineinfo", "-U__CUDA_NO_HALF_OPERATORS__"] + cuda_arch_flags(),
            },
        )
    )
    cmdclass["build_ext"] = BuildExtension

install_requires = [
    "torch>=2.0",
    "numpy",
    "onnx>=1.14",
    "pyyaml",
    "tqdm",
]

extras_require = {
    "trt": ["tensorrt>=8.6", "pycuda", "polygraphy"],
    "ort": ["onnxruntime-gpu>=1.16"],
    "triton": ["triton>=2.1"],
    "serve": ["fastapi", "uvicorn", "nvidia-ml-py"],
    "dev": ["pytest", "black", "ruff"],
}

setup(
    name="qtoolkit",
    version=get_version(),
    description="Quantization, pruning and deployment utilities for PyTorch models on NVIDIA GPUs",
    long_description=(ROOT / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("tests", "benchmarks")),
    python_requires=">=3.8",
    install_requires=install_requires,
    extras_require=extras_require,
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
        "License :: OSI Approved :: Apache Software License",
    ],
)
