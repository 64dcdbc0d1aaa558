"""Build the quant_cuda extension used by GPTQ-for-LLaMa.

    python setup_cuda.py install

Requires nvcc from a CUDA toolkit that matches the one PyTorch was built with.
"""
import os
import subprocess
import sys

from setuptools import setup
from torch.utils import cpp_extension
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

HERE = os.path.dirname(os.path.abspath(__file__))


def get_nvcc_version():
    if CUDA_HOME is None:
        raise RuntimeError("CUDA_HOME is not set; install the CUDA toolkit (nvcc) first")
    out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "-V"], text=True)
    release = out.split("release ")[1].split(",")[0]
    return tuple(int(x) for x in release.split("."))


def get_arch_flags():
    """Compile for every arch in TORCH_CUDA_ARCH_LIST, or sm_80/sm_86 by default."""
    arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", "8.0;8.6")
    flags = []
    for arch in arch_list.replace(" ", ";").split(";"):
        if not arch:
            continue
        num = arch.replace(".", "").replace("+PTX", "")
        flags += ["-gencode", f"arch=compute_{num},code=sm_{num}"]
    return flags


def read_version():
    with open(os.path.join(HERE, "VERSION")) as f:
        return f.read().strip()


nvcc_major, nvcc_minor = get_nvcc_version()[:2]
print(f"building quant_cuda with nvcc {nvcc_major}.{nvcc_minor}", file=sys.stderr)

extra_compile_args = {
    "cxx": ["-O3", "-std=c++17"],
    "nvcc": ["-O3", "--use_fast_math", "-lineinfo", "-U__CUDA_NO_HALF_OPERATORS__",
             "-U__CUDA_NO_HALF_CONVERSIONS__"] + get_arch_flags(),
}

ext_modules = [
    CUDAExtension(
        name="quant_cuda",
        sources=[
            "quant_cuda.cpp",
            "quant_cuda_kernel.cu",
        ],
        extra_compile_args=extra_compile_args,
    ),
]

setup(
    name="gptq_llama",
    version=read_version(),
    description="4-bit GPTQ quantization kernels for LLaMA",
    author="qwopqwop200",
    license="Apache-2.0",
    python_requires=">=3.8",
    install_requires=[
        "torch>=2.0.0",
        "transformers>=4.31.0",
        "safetensors",
        "sentencepiece",
        "datasets",
    ],
    extras_require={
        "triton": ["triton>=2.0.0"],
    },
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    py_modules=["quant", "gptq", "llama", "datautils", "modelutils"],
    include_package_data=True,
    zip_safe=False,
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 11.8",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
        "License :: OSI Approved :: Apache Software License",
    ],
)
