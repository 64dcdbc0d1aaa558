import os
import subprocess
import sys
from pathlib import Path

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = Path(__file__).parent.resolve()

if os.environ.get("TORCH_CUDA_ARCH_LIST"):
    # Let the torch extension builder pick the targets from the environment.
    device_capability = ""
else:
    device_capability = torch.cuda.get_device_capability()
    device_capability = f"{device_capability[0]}{device_capability[1]}"

cwd = Path(os.path.dirname(os.path.abspath(__file__)))

nvcc_flags = [
    "-std=c++17",  # NOTE: CUTLASS requires c++17
    "-DENABLE_BF16",  # Enable BF16 for cuda_version >= 11
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT16_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--use_fast_math",
]

if device_capability:
    nvcc_flags.extend([
        f"--generate-code=arch=compute_{device_capability},code=sm_{device_capability}",
        f"-DGROUPED_GEMM_DEVICE_CAPABILITY={device_capability}",
    ])

# CUTLASS grouped GEMM is the default; the cuBLAS fallback loops over experts.
if os.environ.get("GROUPED_GEMM_CUTLASS", "1") == "1":
    nvcc_flags.append("-DGROUPED_GEMM_CUTLASS")


def _cutlass_submodule_ready() -> bool:
    return (cwd / "third_party" / "cutlass" / "include" / "cutlass").is_dir()


if not _cutlass_submodule_ready():
    print("grouped_gemm: fetching the CUTLASS submodule ...", file=sys.stderr)
    subprocess.check_call(["git", "submodule", "update", "--init", "--recursive"], cwd=str(cwd))

ext_modules = [
    CUDAExtension(
        "grouped_gemm_backend",
        [
            "csrc/ops.cu",
            "csrc/grouped_gemm.cu",
            "csrc/sinkhorn.cu",
            "csrc/permute.cu",
        ],
        include_dirs=[
            f"{cwd}/third_party/cutlass/include/",
            f"{cwd}/csrc",
        ],
        extra_compile_args={
            "cxx": [
                "-fopenmp",
                "-fPIC",
                "-Wno-strict-aliasing",
            ],
            "nvcc": nvcc_flags,
        },
        libraries=["cublas"],
    )
]

extra_deps = {}

extra_deps["dev"] = [
    "absl-py",
    "pytest",
]

extra_deps["all"] = set(dep for deps in extra_deps.values() for dep in deps)

long_description = (here / "README.md").read_text(encoding="utf-8") if (here / "README.md").exists() else ""

setup(
    name="grouped_gemm",
    version="0.1.6",
    author="Trevor Gale",
    author_email="tgale@stanford.edu",
    description="Grouped GEMM",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/tgale96/grouped_gemm",
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: BSD License",
        "Operating System :: Unix",
    ],
    packages=find_packages(),
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    install_requires=["absl-py", "numpy", "torch"],
    extras_require=extra_deps,
)
