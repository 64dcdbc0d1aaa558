#
# SPDX-FileCopyrightText: Copyright (c) 1993-2023 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
"""Setup script for pytorch_quantization (builds the fake-quant CUDA kernels)."""

import os
import subprocess
import sys

from setuptools import setup, find_packages
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

abspath = os.path.dirname(os.path.realpath(__file__))

# Cover Volta through Hopper unless the user asked for something narrower.
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;8.9;9.0+PTX")

with open(os.path.join(abspath, "requirements.txt")) as f:
    requirements = f.read().splitlines()

license_header = """#
# SPDX-FileCopyrightText: Copyright (c) 1993-2023 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
#"""


def get_version():
    """Read the version from VERSION and append a local git hash for dev builds."""
    with open(os.path.join(abspath, "VERSION")) as f:
        version = f.read().strip()
    if os.getenv("RELEASE", "0") == "1":
        return version
    try:
        sha = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=abspath).decode("ascii").strip()
        version += "+" + sha
    except Exception:  # pylint: disable=broad-except
        pass
    return version


def write_version_file(version):
    version_path = os.path.join(abspath, "pytorch_quantization", "version.py")
    with open(version_path, "w") as f:
        f.write(license_header + "\n")
        f.write("__version__ = '{}'\n".format(version))


nvcc_flags = [
    "-O3",
    "--use_fast_math",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "--expt-relaxed-constexpr",
]
if os.getenv("PQ_DEBUG_KERNELS", "0") == "1":
    nvcc_flags += ["-lineinfo", "-G"]

cuda_ext = CUDAExtension(
    name="pytorch_quantization.cuda_ext",
    sources=[
        os.path.join(abspath, "src/tensor_quant.cpp"),
        os.path.join(abspath, "src/tensor_quant_gpu.cu"),
    ],
    extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
)

if __name__ == "__main__":
    version = get_version()
    write_version_file(version)

    setup(
        name="pytorch_quantization",
        version=version,
        description="NVIDIA Pytorch quantization toolkit",
        author="NVIDIA",
        author_email="nvidia@nvidia.com",
        url="https://github.com/nvidia/tensorrt",
        package_dir={"pytorch_quantization": "pytorch_quantization"},
        packages=find_packages(exclude=("tests", "examples")),
        install_requires=requirements,
        python_requires=">=3.7",
        ext_modules=[cuda_ext],
        cmdclass={"build_ext": BuildExtension},
        zip_safe=False,
        long_description=open(os.path.join(abspath, "README.md")).read(),
        long_description_content_type="text/markdown",
        license="Apache 2.0",
        classifiers=[
            "Development Status :: 4 - Beta",
            "Intended Audience :: Developers",
            "Intended Audience :: Science/Research",
            "Environment :: GPU :: NVIDIA CUDA",
            "License :: OSI Approved :: Apache Software License",
            "Programming Language :: Python :: 3",
            "Topic :: Scientific/Engineering :: Artificial Intelligence",
        ],
    )
