# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Build script for generative-recommenders.

Builds one native extension, ``generative_recommenders._my_ops_cuda``, which
registers the ``torch.ops.my_ops`` namespace (jagged concat/split, jagged
index select, block-wise top-k, hash bucketize).

    pip install -e .                      # default arch list (A100 + H100)
    TORCH_CUDA_ARCH_LIST="8.0" pip install -e .
    GR_SKIP_CUDA_BUILD=1 pip install -e .  # pure-python install (no my_ops)
"""

import glob
import os
import subprocess

from setuptools import find_packages, setup

ROOT = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(ROOT, "generative_recommenders", "ops", "cpp", "csrc")

SKIP_CUDA_BUILD = os.environ.get("GR_SKIP_CUDA_BUILD", "0") == "1"


def _get_version() -> str:
    version = "0.1.0"
    try:
        sha = (
            subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT)
            .decode("ascii")
            .strip()
        )
        version += f"+git{sha}"
    except Exception:
        pass
    return version


def _nvcc_threads() -> list:
    return ["--threads", os.environ.get("NVCC_THREADS", "4")]


def get_extensions() -> list:
    if SKIP_CUDA_BUILD:
        return []

    from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension

    if CUDA_HOME is None:
        raise RuntimeError(
            "CUDA_HOME is not set; my_ops needs nvcc. Set GR_SKIP_CUDA_BUILD=1 for a "
            "pure-python install."
        )

    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0a")

    sources = sorted(glob.glob(os.path.join(CSRC, "*.cpp"))) + sorted(
        glob.glob(os.path.join(CSRC, "*.cu"))
    )
    sources = [os.path.relpath(s, ROOT) for s in sources]

    extra_compile_args = {
        "cxx": ["-O3", "-std=c++17"],
        "nvcc": [
            "-O3",
            "-std=c++17",
            "--use_fast_math",
            "--expt-relaxed-constexpr",
            "--expt-extended-lambda",
            "-U__CUDA_NO_HALF_OPERATORS__",
            "-U__CUDA_NO_HALF_CONVERSIONS__",
            "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
            "-lineinfo",
        ]
        + _nvcc_threads(),
    }

    return [
        CUDAExtension(
            name="generative_recommenders._my_ops_cuda",
            sources=sources,
            include_dirs=[CSRC],
            extra_compile_args=extra_compile_args,
            libraries=["cublas"],
        )
    ]


def get_cmdclass() -> dict:
    if SKIP_CUDA_BUILD:
        return {}
    from torch.utils.cpp_extension import BuildExtension

    return {"build_ext": BuildExtension.with_options(use_ninja=True)}


with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="generative_recommenders",
    version=_get_version(),
    description="Generative Recommenders (HSTU) research code",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/facebookresearch/generative-recommenders",
    packages=find_packages(exclude=("tests", "configs", "scripts")),
    python_requires=">=3.10",
    ext_modules=get_extensions(),
    cmdclass=get_cmdclass(),
    install_requires=[
        "torch>=2.4.0",
        "fbgemm-gpu>=0.8.0",
        "triton>=3.0.0",
        "gin-config",
        "absl-py",
        "pandas",
        "tensorboard",
        "hypothesis",
    ],
    extras_require={
        "hstu_cuda": ["hstu-attn>=0.1.0"],
        "dev": ["pytest", "ufmt", "pyre-check"],
    },
    zip_safe=False,
)
