"""MegaBlocks package setup.

Builds the `megablocks_ops` CUDA extension (histogram, CUB sort, prefix sums,
block-sparse topology and replicate kernels) next to the pure-Python package.
"""

import os
import re
import warnings
from typing import Any, Dict, Mapping

import setuptools
from setuptools import find_packages, setup

# torch has to be importable at build time: the extension is compiled ahead of
# time against the installed torch headers.
try:
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension
except ModuleNotFoundError as e:
    raise ModuleNotFoundError("No module named 'torch'. `torch` is required to install `MegaBlocks`.") from e

_PACKAGE_NAME = "megablocks"
_PACKAGE_DIR = "megablocks"
_REPO_REAL_PATH = os.path.dirname(os.path.realpath(__file__))
_PACKAGE_REAL_PATH = os.path.join(_REPO_REAL_PATH, _PACKAGE_DIR)

# Read the package version.
with open(os.path.join(_PACKAGE_REAL_PATH, "_version.py"), encoding="utf-8") as f:
    content = f.read()
    # __version__ = "X.Y.Z" -> capture X.Y.Z
    expr = re.compile(r"""^__version__\s*=\s*['"]([0-9]+\.[0-9]+\.[0-9]+(?:\.\w+)?)['"]""", re.MULTILINE)
    repo_version = expr.findall(content)[0]

with open("README.md", "r", encoding="utf-8") as readme:
    long_description = readme.read()

classifiers = [
    "Programming Language :: Python :: 3",
    "Programming Language :: Python :: 3.9",
    "Programming Language :: Python :: 3.10",
    "Programming Language :: Python :: 3.11",
    "License :: OSI Approved :: Apache Software License",
    "Operating System :: Unix",
]

install_requires = [
    "numpy>=1.21.5,<2.1.0",
    "packaging>=21.3.0,<24.2",
    "torch>=2.4.0,<2.4.1",
    "triton>=2.1.0",
    "stanford-stk==0.7.1",
]

extra_deps = {}

extra_deps["gg"] = [
    "grouped_gemm==0.1.6",
]

extra_deps["dev"] = [
    "absl-py",
    "coverage[toml]==7.4.4",
    "pre-commit>=3.4.0,<4",
    "pytest_codeblocks>=0.16.1,<0.17",
    "pytest-cov>=4,<5",
    "pytest>=7.2.1,<8",
    "pytest-xdist>=3.5.0,<4",
]

extra_deps["testing"] = [
    "mosaicml>=0.24.1, <0.25",
]

extra_deps["all"] = list({dep for key, deps in extra_deps.items() for dep in deps if key not in {"testing"}})

cmdclass = {}
ext_modules = []

# The extension is only built against a CUDA build of torch with a toolkit present.
if "cu" in torch.__version__ and CUDA_HOME is not None:

    cmdclass = {"build_ext": BuildExtension}
    nvcc_flags = ["--ptxas-options=-v", "--optimize=2"]

    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        # TORCH_CUDA_ARCH_LIST wins: let the torch builder pick the targets.
        device_capability = ""
    else:
        device_capability_tuple = torch.cuda.get_device_capability()
        device_capability = f"{device_capability_tuple[0]}{device_capability_tuple[1]}"

    if device_capability:
        nvcc_flags.append(f"--generate-code=arch=compute_{device_capability},code=sm_{device_capability}")

    ext_modules = [
        CUDAExtension(
            "megablocks_ops",
            ["csrc/ops.cu"],
            include_dirs=["csrc"],
            extra_compile_args={
                "cxx": ["-fopenmp"],
                "nvcc": nvcc_flags,
            },
        ),
    ]
elif CUDA_HOME is None:
    warnings.warn("Attempted to install CUDA extensions, but CUDA_HOME was None. " +
                  "Please install CUDA and ensure that the CUDA_HOME environment " +
                  "variable points to the installation location.")
else:
    warnings.warn("Warning: No CUDA devices; cuda code will not be compiled.")

setup(
    name=_PACKAGE_NAME,
    version=repo_version,
    author="Trevor Gale",
    author_email="tgale@stanford.edu",
    description="MegaBlocks",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/databricks/megablocks",
    classifiers=classifiers,
    packages=find_packages(exclude=["tests*", "third_party*", "yamls*", "exp*", ".github*"]),
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    install_requires=install_requires,
    extras_require=extra_deps,
    python_requires=">=3.9",
    package_data={_PACKAGE_NAME: ["py.typed"]},
)
