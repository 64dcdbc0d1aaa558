#!/usr/bin/env python3
# Copyright (c) DP Technology.
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

import os
import subprocess
import sys

from setuptools import find_packages, setup

if sys.version_info < (3, 7):
    sys.exit("Sorry, Python >= 3.7 is required for unicore.")

import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME


def write_version_py():
    with open(os.path.join("unicore", "version.txt")) as f:
        version = f.read().strip()

    # write version info to unicore/version.py
    with open(os.path.join("unicore", "version.py"), "w") as f:
        f.write('__version__ = "{}"\n'.format(version))
    return version


version = write_version_py()


with open("README.md") as f:
    readme = f.read()


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output(
        [cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True
    )
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    bare_metal_major = release[0]
    bare_metal_minor = release[1][0]
    return raw_output, bare_metal_major, bare_metal_minor


def check_cuda_torch_binary_vs_bare_metal(cuda_dir):
    raw_output, bare_metal_major, bare_metal_minor = get_cuda_bare_metal_version(
        cuda_dir
    )
    torch_binary_major = torch.version.cuda.split(".")[0]
    torch_binary_minor = torch.version.cuda.split(".")[1]

    print("\nCompiling cuda extensions with")
    print(raw_output + "from " + cuda_dir + "/bin\n")

    if (bare_metal_major != torch_binary_major) or (
        bare_metal_minor != torch_binary_minor
    ):
        raise RuntimeError(
            "Cuda extensions are being compiled with a version of Cuda that does "
            + "not match the version used to compile Pytorch binaries.  "
            + "Pytorch binaries were compiled with Cuda {}.\n".format(torch.version.cuda)
        )


if "--disable-cuda-ext" in sys.argv:
    sys.argv.remove("--disable-cuda-ext")
    disable_cuda_ext = True
else:
    disable_cuda_ext = False

cmdclass = {}
ext_modules = []

if not disable_cuda_ext:
    if CUDA_HOME is None:
        raise RuntimeError(
            "Nvcc was not found. Are you sure your environment has nvcc available? "
            "If you want to install unicore without the fused CUDA kernels, "
            "pass --disable-cuda-ext."
        )

    check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)

    # sm_70 (V100), sm_80 (A100), sm_86 (A10/3090); Uni-Mol is mostly trained on A100
    cc_flag = ["-gencode", "arch=compute_70,code=sm_70"]
    _, bare_metal_major, _ = get_cuda_bare_metal_version(CUDA_HOME)
    if int(bare_metal_major) >= 11:
        cc_flag.append("-gencode")
        cc_flag.append("arch=compute_80,code=sm_80")
        cc_flag.append("-gencode")
        cc_flag.append("arch=compute_86,code=sm_86")

    nvcc_common = [
        "-O3",
        "--use_fast_math",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
    ]

    ext_modules.append(
        CUDAExtension(
            name="unicore_fused_layernorm",
            sources=[
                "csrc/layernorm/interface.cpp",
                "csrc/layernorm/layernorm.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": nvcc_common + cc_flag,
            },
        )
    )
    ext_modules.append(
        CUDAExtension(
            name="unicore_fused_layernorm_backward_gamma_beta",
            sources=[
                "csrc/layernorm/interface_gamma_beta.cpp",
                "csrc/layernorm/layernorm_backward.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": nvcc_common + ["-maxrregcount=50"] + cc_flag,
            },
        )
    )
    ext_modules.append(
        CUDAExtension(
            name="unicore_fused_softmax_dropout",
            sources=[
                "csrc/softmax_dropout/interface.cpp",
                "csrc/softmax_dropout/softmax_dropout_kernel.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": nvcc_common + cc_flag,
            },
        )
    )
    ext_modules.append(
        CUDAExtension(
            name="unicore_fused_adam",
            sources=["csrc/adam/interface.cpp", "csrc/adam/adam_kernel.cu"],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--use_fast_math"] + cc_flag,
            },
        )
    )
    ext_modules.append(
        CUDAExtension(
            name="unicore_fused_multi_tensor",
            sources=[
                "csrc/multi_tensor/interface.cpp",
                "csrc/multi_tensor/multi_tensor_l2norm_kernel.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--use_fast_math"] + cc_flag,
            },
        )
    )
    cmdclass["build_ext"] = BuildExtension

setup(
    name="unicore",
    version=version,
    description="DP Technology's Core AI Framework",
    url="https://github.com/dptech-corp/unicore",
    classifiers=[
        "Intended Audience :: Science/Research",
        "License :: OSI Approved :: MIT License",
        "Programming Language :: Python :: 3.7",
        "Programming Language :: Python :: 3.8",
        "Programming Language :: Python :: 3.9",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    long_description=readme,
    long_description_content_type="text/markdown",
    setup_requires=[
        "setuptools>=18.0",
    ],
    install_requires=[
        "numpy; python_version>='3.7'",
        "lmdb",
        "torch>=1.10.0",
        "tqdm",
        "ml_collections",
        "scipy",
        "tensorboardX",
        "tokenizers",
    ],
    packages=find_packages(
        exclude=[
            "examples",
            "examples.*",
            "scripts",
            "scripts.*",
            "tests",
            "tests.*",
        ]
    ),
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    entry_points={
        "console_scripts": [
            "unicore-train = unicore_cli.train:cli_main",
        ],
    },
    zip_safe=False,
)
