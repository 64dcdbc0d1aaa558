# Copyright 2021 AlQuraishi Laboratory
# Copyright 2021 DeepMind Technologies Limited
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
import os
import subprocess

from setuptools import setup, find_packages

import torch
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME

from scripts.utils import get_nvidia_cc


HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_DIR = os.path.join(HERE, "openfold", "utils", "kernel", "csrc")

version_dependent_macros = [
    "-DVERSION_GE_1_1",
    "-DVERSION_GE_1_3",
    "-DVERSION_GE_1_5",
]

extra_cuda_flags = [
    "-std=c++17",
    "-maxrregcount=50",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
]


def get_cuda_bare_metal_version(cuda_dir):
    """Ask nvcc which toolkit it belongs to; (-1, 0) when there is no CUDA at all."""
    if cuda_dir is None or torch.version.cuda is None:
        print("CUDA is not found, the CPU-only stub of the attention kernel will be built")
        return None, -1, 0
    raw_output = subprocess.check_output(
        [os.path.join(cuda_dir, "bin", "nvcc"), "-V"], universal_newlines=True
    )
    tokens = raw_output.split()
    release = tokens[tokens.index("release") + 1].split(".")
    major = release[0]
    minor = release[1][0]
    return raw_output, major, minor


# Architectures we ship SASS for when the build host has no visible device.
compute_capabilities = {
    (3, 7),   # K80
    (5, 2),   # Titan X
    (6, 1),   # GeForce 10-series
    (7, 0),   # V100
}

_, bare_metal_major, _ = get_cuda_bare_metal_version(CUDA_HOME)
if int(bare_metal_major) >= 11:
    compute_capabilities.add((8, 0))
    compute_capabilities.add((8, 6))

# If the build host has a GPU, only compile for that one (much faster builds).
local_cc, cc_error = get_nvidia_cc()
if local_cc is not None:
    compute_capabilities = {local_cc}
elif cc_error:
    print(f"Could not query the local GPU ({cc_error}); building for all default architectures")

cc_flag = []
for major, minor in sorted(compute_capabilities):
    cc_flag.extend(["-gencode", f"arch=compute_{major}{minor},code=sm_{major}{minor}"])

extra_cuda_flags += cc_flag


if bare_metal_major != -1:
    modules = [CUDAExtension(
        name="attn_core_inplace_cuda",
        sources=[
            os.path.join(KERNEL_DIR, "softmax_cuda.cpp"),
            os.path.join(KERNEL_DIR, "softmax_cuda_kernel.cu"),
        ],
        include_dirs=[KERNEL_DIR],
        extra_compile_args={
            "cxx": ["-O3"] + version_dependent_macros,
            "nvcc": ["-O3", "--use_fast_math"] + version_dependent_macros + extra_cuda_flags,
        },
    )]
else:
    modules = [CppExtension(
        name="attn_core_inplace_cuda",
        sources=[
            os.path.join(KERNEL_DIR, "softmax_cuda.cpp"),
            os.path.join(KERNEL_DIR, "softmax_cuda_stub.cpp"),
        ],
        extra_compile_args={"cxx": ["-O3"]},
    )]


with open(os.path.join(HERE, "README.md"), encoding="utf-8") as fh:
    long_description = fh.read()

setup(
    name="openfold",
    version="2.1.0",
    description="A PyTorch reimplementation of DeepMind's AlphaFold 2",
    long_description=long_description,
    long_description_content_type="text/markdown",
    author="OpenFold Team",
    author_email="openfold@example.org",
    license="Apache License, Version 2.0",
    url="https://github.com/aqlaboratory/openfold",
    packages=find_packages(exclude=["tests", "scripts"]),
    include_package_data=True,
    package_data={
        "openfold": ["utils/kernel/csrc/*"],
        "": ["resources/stereo_chemical_props.txt"],
    },
    ext_modules=modules,
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.9",
    classifiers=[
        "License :: OSI Approved :: Apache Software License",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: Python :: 3.9",
        "Programming Language :: Python :: 3.10",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
