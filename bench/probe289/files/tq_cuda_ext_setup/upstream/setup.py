#!/usr/bin/env python
"""Build script for torchquantum with the optional fused state-vector kernels.

The pure-Python package works everywhere.  When a CUDA toolkit is found
(``CUDA_HOME`` or ``nvcc`` on PATH) and ``TQ_BUILD_CUDA_EXT`` is not ``0``,
the extension ``torchquantum._C`` is compiled from ``csrc/``; it provides
fused single-/two-qubit gate application and sampling kernels that are
2-6x faster than the einsum path for >= 16 qubits.

    pip install -e .                       # auto-detect
    TQ_BUILD_CUDA_EXT=0 pip install -e .   # force pure-Python
    TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0" pip install -e .
"""

import os
import re
import subprocess
import sys

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))


def read_version():
    with open(os.path.join(HERE, "torchquantum", "__init__.py")) as f:
        m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', f.read(), re.M)
    if not m:
        raise RuntimeError("cannot find __version__")
    return m.group(1)


def read_requirements(name="requirements.txt"):
    path = os.path.join(HERE, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


def nvcc_version():
    if CUDA_HOME is None:
        return None
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "-V"],
                                      universal_newlines=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def want_cuda_ext():
    flag = os.environ.get("TQ_BUILD_CUDA_EXT", "auto").lower()
    if flag in ("0", "false", "no"):
        return False
    has_toolkit = CUDA_HOME is not None and nvcc_version() is not None
    if flag in ("1", "true", "yes") and not has_toolkit:
        sys.exit("TQ_BUILD_CUDA_EXT=1 but no CUDA toolkit found (set CUDA_HOME)")
    return has_toolkit


def get_extensions():
    if not want_cuda_ext():
        print("torchquantum: building without the CUDA extension")
        return []

    major, minor = nvcc_version()
    torch_cuda = torch.version.cuda
    if torch_cuda is not None and torch_cuda.split(".")[0] != str(major):
        print(f"WARNING: nvcc {major}.{minor} does not match torch CUDA {torch_cuda}; "
              "the extension may fail to load")

    if "TORCH_CUDA_ARCH_LIST" not in os.environ:
        os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0;7.5;8.0;8.6+PTX"

    nvcc_flags = [
        "-O3",
        "--use_fast_math",
        "-lineinfo",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "--expt-relaxed-constexpr",
    ]
    if (major, minor) >= (11, 8):
        nvcc_flags.append("-gencode=arch=compute_90,code=sm_90")

    sources = [
        "csrc/bindings.cpp",
        "csrc/apply_gate_kernel.cu",
        "csrc/apply_controlled_kernel.cu",
        "csrc/sample_kernel.cu",
        "csrc/expval_pauli_kernel.cu",
    ]

    return [
        CUDAExtension(
            name="torchquantum._C",
            sources=sources,
            include_dirs=[os.path.join(HERE, "csrc", "include")],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": nvcc_flags,
            },
        )
    ]


requirements = read_requirements()

setup(
    name="torchquantum",
    version=read_version(),
    description="A PyTorch-centric hybrid classical-quantum dynamic neural networks framework.",
    long_description=open(os.path.join(HERE, "README.md")).read() if os.path.exists(os.path.join(HERE, "README.md")) else "",
    long_description_content_type="text/markdown",
    author="Hanrui Wang",
    author_email="hanruiwang.hw@gmail.com",
    url="https://github.com/mit-han-lab/torchquantum",
    license="MIT",
    install_requires=requirements,
    extras_require={
        "qiskit": ["qiskit>=0.39.0,<1.0.0", "qiskit-aer"],
        "gpu-sim": ["qiskit-aer-gpu", "cuquantum-python-cu12"],
        "doc": ["nbsphinx", "recommonmark", "furo"],
    },
    python_requires=">=3.7",
    packages=find_packages(exclude=["examples", "test", "artifact"]),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    include_package_data=True,
    zip_safe=False,
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: MIT License",
        "Environment :: GPU :: NVIDIA CUDA",
        "Operating System :: POSIX :: Linux",
    ],
)
