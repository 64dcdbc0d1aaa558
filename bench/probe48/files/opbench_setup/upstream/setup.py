"""opbench: operator micro-benchmarks for PyTorch (cold-L2 kernel timing, roofline reports).

    pip install -e .                  # builds opbench._C (needs nvcc)
    OPBENCH_SKIP_EXT=1 pip install -e .   # pure-Python install, slower L2 flush
"""
import os
import subprocess
from pathlib import Path

from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

ROOT = Path(__file__).parent
VERSION = "0.4.2"


def get_version() -> str:
    try:
        sha = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).decode().strip()
        return f"{VERSION}+{sha}"
    except Exception:
        return VERSION


def nvcc_threads() -> list:
    return ["--threads", os.environ.get("NVCC_THREADS", "4")]


def get_extensions():
    if os.environ.get("OPBENCH_SKIP_EXT", "0") == "1":
        return []
    if CUDA_HOME is None:
        raise RuntimeError(
            "opbench._C needs the CUDA toolkit (nvcc). Set CUDA_HOME or install with OPBENCH_SKIP_EXT=1."
        )
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6;8.9;9.0")
    nvcc_flags = [
        "-O3",
        "-std=c++17",
        "--use_fast_math",
        "-lineinfo",
        "--expt-relaxed-constexpr",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
    ] + nvcc_threads()
    sources = [
        "csrc/bindings.cpp",
        "csrc/l2_flush.cu",
        "csrc/gpu_sleep.cu",
        "csrc/clock.cu",
    ]
    return [
        CUDAExtension(
            name="opbench._C",
            sources=sources,
            include_dirs=[str(ROOT / "csrc")],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
            libraries=["cuda"],
        )
    ]


setup(
    name="opbench",
    version=get_version(),
    description="Operator micro-benchmarks for PyTorch",
    long_description=(ROOT / "README.md").read_text() if (ROOT / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("tests", "benchmarks")),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    python_requires=">=3.9",
    install_requires=[
        "torch>=2.1",
        "triton>=2.1",
        "nvidia-ml-py>=12.535",
        "pandas",
        "tabulate",
        "matplotlib",
    ],
    extras_require={
        "cupy": ["cupy-cuda12x>=13.0"],
        "dev": ["pytest", "ruff"],
    },
    entry_points={"console_scripts": ["opbench=opbench.cli:main"]},
)
