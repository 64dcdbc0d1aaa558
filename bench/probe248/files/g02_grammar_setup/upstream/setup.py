"""Build script for sqlgrammar: SQL grammar matcher + token-bitmask kernels for constrained decoding.

    pip install -e .              # builds sqlgrammar._C (CPU + CUDA kernels)
    TORCH_CUDA_ARCH_LIST="8.0" pip install -e .   # restrict archs to speed up the build
"""
import os
import subprocess
from pathlib import Path

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ROOT = Path(__file__).parent.resolve()

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;8.9;9.0")


def get_version():
    version = (ROOT / "sqlgrammar" / "VERSION").read_text().strip()
    try:
        sha = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).decode().strip()
        version += "+g" + sha
    except Exception:
        pass
    return version


def get_extensions():
    sources = [
        "csrc/bindings.cpp",
        "csrc/grammar_matcher.cpp",
        "csrc/earley_parser.cpp",
        "csrc/token_bitmask_cpu.cpp",
        "csrc/token_bitmask_cuda.cu",
    ]
    extra_compile_args = {
        "cxx": ["-O3", "-std=c++17", "-fvisibility=hidden"],
        "nvcc": ["-O3", "-std=c++17", "--use_fast_math", "-lineinfo", "--expt-relaxed-constexpr"],
    }
    return [
        CUDAExtension(
            name="sqlgrammar._C",
            sources=[str(ROOT / s) for s in sources],
            include_dirs=[str(ROOT / "csrc"), str(ROOT / "third_party" / "picojson")],
            extra_compile_args=extra_compile_args,
        )
    ]


setup(
    name="sqlgrammar",
    version=get_version(),
    description="Grammar-constrained decoding for text-to-SQL (SQLite / Spider dialect)",
    packages=find_packages(exclude=("tests", "benchmarks")),
    package_data={"sqlgrammar": ["grammars/*.ebnf", "VERSION"]},
    python_requires=">=3.8",
    install_requires=[
        "torch>=2.1",
        "triton>=2.1.0",
        "transformers>=4.36",
        "sqlglot>=20.0",
    ],
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
