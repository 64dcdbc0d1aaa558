# Adapted from https://github.com/NVIDIA/apex/blob/master/setup.py
#   cd csrc/rotary && pip install .
# Builds the `rotary_emb` extension used by flash_attn/layers/rotary.py (apply_rotary).
import os
import subprocess

import torch
from packaging.version import Version, parse
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension

# ninja build does not work unless include_dirs are abs path
this_dir = os.path.dirname(os.path.abspath(__file__))


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    bare_metal_version = parse(output[release_idx].split(",")[0])
    return raw_output, bare_metal_version


def raise_if_cuda_home_none(global_option: str) -> None:
    if CUDA_HOME is not None:
        return
    raise RuntimeError(
        f"{global_option} was requested, but nvcc was not found.  Are you sure your environment has nvcc available?  "
        "If you're installing within a container from https://hub.docker.com/r/pytorch/pytorch, "
        "only images whose names contain 'devel' will provide nvcc."
    )


def append_nvcc_threads(nvcc_extra_args):
    _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
    if bare_metal_version >= Version("11.2"):
        return nvcc_extra_args + ["--threads", "4"]
    return nvcc_extra_args


def cuda_arch_flags():
    # Check, if CUDA11 is installed for compute capability 8.0
    _, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
    if bare_metal_version < Version("11.0"):
        raise RuntimeError("rotary_emb is only supported on CUDA 11 and above")
    cc_flag = ["-gencode", "arch=compute_70,code=sm_70", "-gencode", "arch=compute_80,code=sm_80"]
    if bare_metal_version >= Version("11.8"):
        cc_flag += ["-gencode", "arch=compute_90,code=sm_90"]
    return cc_flag


if not torch.cuda.is_available():
    # https://github.com/NVIDIA/apex/issues/486
    # Extension builds after https://github.com/pytorch/pytorch/pull/23408 attempt to query
    # torch.cuda.get_device_capability(), which will fail if you are compiling in an environment
    # without visible GPUs (e.g. during an nvidia-docker build command).
    print(
        "\nWarning: Torch did not find available GPUs on this system.\n",
        "If your intention is to cross-compile, this is not an error.\n"
        "By default, we compile for Volta (7.0), Turing (7.5) and Ampere (8.0/8.6),\n"
        "and, if the CUDA version is >= 11.8, Hopper (compute capability 9.0).\n",
    )
    if os.environ.get("TORCH_CUDA_ARCH_LIST", None) is None and CUDA_HOME is not None:
        _, nvcc_version = get_cuda_bare_metal_version(CUDA_HOME)
        if nvcc_version >= Version("11.8"):
            os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0;7.5;8.0;8.6;9.0"
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0;7.5;8.0;8.6"

print("\n\ntorch.__version__  = {}\n\n".format(torch.__version__))

ext_modules = []

raise_if_cuda_home_none("rotary_emb")
ext_modules.append(
    CUDAExtension(
        "rotary_emb",
        [
            "rotary.cpp",
            "rotary_cuda.cu",
        ],
        extra_compile_args={
            "cxx": ["-g", "-march=native", "-funroll-loops"],
            "nvcc": append_nvcc_threads(["-O3", "--use_fast_math", "--expt-extended-lambda"] + cuda_arch_flags()),
        },
        include_dirs=[this_dir],
    )
)

setup(
    name="rotary_emb",
    version="0.1",
    description="Fused rotary embedding CUDA kernel",
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension} if ext_modules else {},
)
