# Copyright (c) DP Technology.
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

import os
import subprocess
import sys
from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

if sys.version_info < (3, 7):
    sys.exit("Sorry, Python >= 3.7 is required for unicore.")


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
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    bare_metal_major = release[0]
    bare_metal_minor = release[1][0]
    return raw_output, bare_metal_major, bare_metal_minor


if not torch.cuda.is_available():
    print("\nWarning: Torch did not find available GPUs on this system.\n",
          "If your intention is to cross-compile, this is not an error.\n"
          "By default, Uni-Core will cross-compile for Pascal (compute capabilities 6.0, 6.1, 6.2),\n"
          "Volta (compute capability 7.0), Turing (compute capability 7.5),\n"
          "and, if the CUDA version is >= 11.0, Ampere (compute capability 8.0).\n"
          "If you wish to cross-compile for a single specific architecture,\n"
          'export TORCH_CUDA_ARCH_LIST="compute capability" before running setup.py.\n')
    if os.environ.get("TORCH_CUDA_ARCH_LIST", None) is None:
        _, bare_metal_major, _ = get_cuda_bare_metal_version(CUDA_HOME)
        if int(bare_metal_major) == 11:
            os.environ["TORCH_CUDA_ARCH_LIST"] = "6.0;6.1;6.2;7.0;7.5;8.0"
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = "6.0;6.1;6.2;7.0;7.5"

print("\n\ntorch.__version__  = {}\n\n".format(torch.__version__))
TORCH_MAJOR = int(torch.__version__.split(".")[0])
TORCH_MINOR = int(torch.__version__.split(".")[1])

if TORCH_MAJOR == 0 or (TORCH_MAJOR == 1 and TORCH_MINOR < 4):
    raise RuntimeError("Requires Pytorch 1.4 or newer.\n")

cmdclass = {}
ext_modules = []

extras = {}

cmdclass["build_ext"] = BuildExtension

if CUDA_HOME is None:
    raise RuntimeError("Cuda extensions are being compiled with a version of Cuda that does not match the one used to compile Pytorch binaries.")

_, bare_metal_major, bare_metal_minor = get_cuda_bare_metal_version(CUDA_HOME)

generator_flag = []
cc_flag = ["-gencode", "arch=compute_70,code=sm_70"]
if int(bare_metal_major) >= 11:
    cc_flag.append("-gencode")
    cc_flag.append("arch=compute_80,code=sm_80")
    cc_flag.append("-gencode")
    cc_flag.append("arch=compute_90,code=sm_90")

NVCC_FLAGS = ["-O3", "--use_fast_math", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
              "--expt-relaxed-constexpr", "--expt-extended-lambda"]

ext_modules.append(
    CUDAExtension(
        name="unicore_fused_rounding",
        sources=["csrc/rounding/interface.cpp", "csrc/rounding/fp32_to_bf16.cu"],
        extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS + generator_flag + cc_flag},
    )
)

ext_modules.append(
    CUDAExtension(
        name="unicore_fused_multi_tensor",
        sources=["csrc/multi_tensor/interface.cpp", "csrc/multi_tensor/multi_tensor_l2norm_kernel.cu"],
        extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS + generator_flag + cc_flag},
    )
)

ext_modules.append(
    CUDAExtension(
        name="unicore_fused_adam",
        sources=["csrc/adam/interface.cpp", "csrc/adam/adam_kernel.cu"],
        include_dirs=[os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc")],
        extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS + generator_flag + cc_flag},
    )
)

ext_modules.append(
    CUDAExtension(
        name="unicore_fused_softmax_dropout",
        sources=["csrc/softmax_dropout/interface.cpp", "csrc/softmax_dropout/softmax_dropout_kernel.cu"],
        extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS + generator_flag + cc_flag},
    )
)

ext_modules.append(
    CUDAExtension(
        name="unicore_fused_layernorm",
        sources=["csrc/layernorm/interface.cpp", "csrc/layernorm/layernorm.cu"],
        extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS + generator_flag + cc_flag},
    )
)

ext_modules.append(
    CUDAExtension(
        name="unicore_fused_layernorm_backward_gamma_beta",
        sources=["csrc/layernorm/interface_gamma_beta.cpp", "csrc/layernorm/layernorm_backward.cu"],
        extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS + generator_flag + cc_flag},
    )
)

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
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    long_description=readme,
    long_description_content_type="text/markdown",
    setup_requires=[
        "setuptools>=18.0",
    ],
    install_requires=[
        "numpy",
        "torch>=2.0.0",
        "lmdb",
        "ml_collections",
        "scipy",
        "tensorboardX",
        "tqdm",
        "tokenizers",
    ],
    packages=find_packages(
        exclude=[
            "build",
            "csrc",
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
    extras_require=extras,
    zip_safe=False,
)
