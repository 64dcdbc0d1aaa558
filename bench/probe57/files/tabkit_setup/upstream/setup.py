"""tabkit: GPU kernels for tabular deep learning (quantile binning, histogram, PLE embeddings).

    pip install -v -e .            # builds tabkit._C with nvcc
    pip install -e ".[rapids]"     # plus the cuDF/cuML interop helpers
"""
import glob
import os
import re
import subprocess
import sys

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

ROOT = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;9.0")


def read_version():
    with open(os.path.join(ROOT, "tabkit", "__init__.py")) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def git_sha():
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).decode().strip()
    except Exception:
        return "unknown"


def nvcc_version():
    if CUDA_HOME is None:
        raise RuntimeError("tabkit needs the CUDA toolkit (set CUDA_HOME) to build its kernels")
    out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "-V"]).decode()
    return re.search(r"release (\d+\.\d+)", out).group(1)


def write_version_file(version):
    with open(os.path.join(ROOT, "tabkit", "version.py"), "w") as f:
        f.write(f'__version__ = "{version}"\ngit_sha = "{git_sha()}"\n')


def get_extensions():
    cuda_ver = nvcc_version()
    print(f"building tabkit._C with nvcc {cuda_ver}", file=sys.stderr)
    sources = glob.glob(os.path.join("csrc", "*.cpp")) + glob.glob(os.path.join("csrc", "cpu", "*.cpp"))
    sources += [
        "csrc/cuda/quantile_bin_kernel.cu",
        "csrc/cuda/histogram_kernel.cu",
        "csrc/cuda/ple_backward_kernel.cu",
    ]
    extra_compile_args = {
        "cxx": ["-O3", "-std=c++17"],
        "nvcc": ["-O3", "--use_fast_math", "-lineinfo", "--expt-relaxed-constexpr", "-std=c++17"],
    }
    return [
        CUDAExtension(
            name="tabkit._C",
            sources=sources,
            include_dirs=[os.path.join(ROOT, "csrc")],
            define_macros=[("WITH_CUDA", None)],
            extra_compile_args=extra_compile_args,
        )
    ]


version = read_version()
write_version_file(version)

setup(
    name="tabkit",
    version=version,
    description="GPU kernels and layers for tabular deep learning",
    long_description=open(os.path.join(ROOT, "README.md")).read() if os.path.exists(os.path.join(ROOT, "README.md")) else "",
    long_description_content_type="text/markdown",
    author="tabkit contributors",
    license="Apache-2.0",
    packages=find_packages(exclude=("tests", "benchmarks")),
    python_requires=">=3.9",
    install_requires=[
        "torch>=2.1",
        "numpy>=1.23",
        "pandas>=1.5",
        "scikit-learn>=1.2",
        "triton>=2.1",
    ],
    extras_require={
        "rapids": ["cudf-cu12>=24.02", "cuml-cu12>=24.02", "cupy-cuda12x>=12.0"],
        "dev": ["pytest", "pytest-benchmark", "rtdl>=0.0.13"],
    },
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    zip_safe=False,
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
