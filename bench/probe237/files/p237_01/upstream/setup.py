"""Build script for punica.

The CUDA kernels (BGMV, SGMV/cutlass, flashinfer decode/prefill and a fused
rms_norm) are compiled into a single extension module ``punica.ops._kernels``.

Building requires a CUDA toolkit matching the one PyTorch was built with and a
GPU with compute capability >= 8.0 (Ampere).  Set ``TORCH_CUDA_ARCH_LIST`` to
restrict the architectures, e.g. ``TORCH_CUDA_ARCH_LIST="8.0;8.6;8.9"``.
"""
import contextlib
import datetime
import itertools
import os
import pathlib
import platform
import re
import subprocess

import setuptools
import torch
import torch.utils.cpp_extension as torch_cpp_ext

root = pathlib.Path(__name__).parent


def glob(pattern):
    return [str(p) for p in root.glob(pattern)]


def remove_unwanted_pytorch_nvcc_flags():
    REMOVE_NVCC_FLAGS = [
        "-D__CUDA_NO_HALF_OPERATORS__",
        "-D__CUDA_NO_HALF_CONVERSIONS__",
        "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "-D__CUDA_NO_HALF2_OPERATORS__",
    ]
    for flag in REMOVE_NVCC_FLAGS:
        with contextlib.suppress(ValueError):
            torch_cpp_ext.COMMON_NVCC_FLAGS.remove(flag)


def get_local_version_suffix() -> str:
    if not (root / ".git").is_dir():
        return ""
    now = datetime.datetime.now()
    git_hash = subprocess.check_output(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, text=True
    ).strip()
    commit_number = subprocess.check_output(
        ["git", "rev-list", "HEAD", "--count"], cwd=root, text=True
    ).strip()
    dirty = ".dirty" if subprocess.run(["git", "diff", "--quiet"]).returncode else ""
    return f"+c{commit_number}.d{now:%Y%m%d}.{git_hash}{dirty}"


def get_version() -> str:
    version = (root / "version.txt").read_text().strip()
    version += get_local_version_suffix()
    return version


def get_cuda_version() -> str:
    # torch.version.cuda is None for CPU-only builds of PyTorch
    if torch.version.cuda is None:
        raise RuntimeError(
            "punica requires a CUDA build of PyTorch; got torch " + torch.__version__
        )
    return torch.version.cuda


def generate_flashinfer_cu() -> list[str]:
    page_sizes = os.environ.get("PUNICA_PAGE_SIZES", "16").split(",")
    group_sizes = os.environ.get("PUNICA_GROUP_SIZES", "1,4,8").split(",")
    head_dims = os.environ.get("PUNICA_HEAD_DIMS", "128").split(",")
    page_sizes = [int(x) for x in page_sizes]
    group_sizes = [int(x) for x in group_sizes]
    head_dims = [int(x) for x in head_dims]
    dtypes = {"fp16": "nv_half", "bf16": "nv_bfloat16"}
    funcs = ["prefill"]
    prefix = "csrc/flashinfer_adapter/generated"
    (root / prefix).mkdir(parents=True, exist_ok=True)

    files = []
    for func, page_size, group_size, head_dim, dtype in itertools.product(
        funcs, page_sizes, group_sizes, head_dims, dtypes
    ):
        fname = f"batch_{func}_p{page_size}_g{group_size}_h{head_dim}_{dtype}.cu"
        files.append(f"{prefix}/{fname}")
        content = (
            '#include "../flashinfer_decl.h"\n\n'
            '#include <flashinfer.cuh>\n\n'
            "using flashinfer::PageStorage;\n"
            "using flashinfer::RotaryMode;\n\n"
            f"INST_Batch{func.capitalize()}({dtypes[dtype]}, {page_size}, "
            f"{group_size}, {head_dim}, RotaryMode::kNone)\n"
            f"INST_Batch{func.capitalize()}({dtypes[dtype]}, {page_size}, "
            f"{group_size}, {head_dim}, RotaryMode::kLlama)\n"
        )
        path = root / prefix / fname
        if not path.exists() or path.read_text() != content:
            path.write_text(content)
    return files


def check_arch_list():
    arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", "")
    if not arch_list:
        return
    for arch in re.split(r"[;\s]+", arch_list):
        arch = arch.replace("+PTX", "")
        if arch and float(arch) < 8.0:
            raise RuntimeError(
                f"punica kernels need sm_80 or newer, TORCH_CUDA_ARCH_LIST contains {arch}"
            )


remove_unwanted_pytorch_nvcc_flags()
check_arch_list()
print(f"building punica against CUDA {get_cuda_version()} on {platform.machine()}")

ext_modules = []
ext_modules.append(
    torch_cpp_ext.CUDAExtension(
        name="punica.ops._kernels",
        sources=[
            "csrc/punica_ops.cc",
            "csrc/bgmv/bgmv_all.cu",
            "csrc/flashinfer_adapter/flashinfer_all.cu",
            "csrc/rms_norm/rms_norm_cutlass.cu",
            "csrc/sgmv/sgmv_cutlass.cu",
            "csrc/sgmv_flashinfer/sgmv_all.cu",
        ]
        + generate_flashinfer_cu(),
        include_dirs=[
            str(root.resolve() / "third_party/cutlass/include"),
            str(root.resolve() / "third_party/flashinfer/include"),
        ],
        extra_compile_args={
            "cxx": ["-O3"],
            "nvcc": ["-O3", "--use_fast_math", "-lineinfo", "--threads", "8"],
        },
    )
)

setuptools.setup(
    name="punica",
    version=get_version(),
    author="Punica team",
    description="Serving multiple LoRA finetuned LLM as one",
    license="Apache License 2.0",
    url="https://github.com/punica-ai/punica",
    package_dir={"": "src"},
    packages=setuptools.find_packages(where="src"),
    python_requires=">=3.10",
    install_requires=[
        "torch>=2.1",
        "transformers",
        "numpy",
    ],
    extras_require={
        "dev": ["pytest", "pytest-xdist", "rich", "scipy"],
    },
    ext_modules=ext_modules,
    cmdclass={"build_ext": torch_cpp_ext.BuildExtension},
)
