"""
Build the optional fused CUDA kernels used by fireants (cross-correlation loss, fused grid
sampling / warp composition and the fused Adam update for displacement fields).

    cd fused_ops && pip install -v --no-build-isolation .

The kernels are optional: fireants falls back to pure PyTorch when `fireants_fused_ops` cannot be
imported, at the cost of ~2-4x more memory and time for large volumes.
"""
import os
import sys
import glob

from setuptools import setup
import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

here = os.path.dirname(os.path.abspath(__file__))

if CUDA_HOME is None:
    sys.exit("fireants_fused_ops: CUDA_HOME is not set and nvcc was not found. "
             "Install the CUDA toolkit matching your PyTorch build (torch.version.cuda=%s)." % torch.version.cuda)

# Build for the common data-center and consumer GPUs unless the user asked otherwise.
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;8.9;9.0+PTX")

debug = os.environ.get("FFO_DEBUG", "0") == "1"
cxx_flags = ["-O0", "-g"] if debug else ["-O3"]
nvcc_flags = ["-O0", "-G", "-g"] if debug else ["-O3", "--use_fast_math", "-lineinfo"]
nvcc_flags += ["-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "--expt-relaxed-constexpr"]

sources = [
    "src/binding.cpp",
    "src/CrossCorrelation.cu",
    "src/FusedGridSampler.cu",
    "src/FusedGridComposer.cu",
    "src/AdamUtils.cu",
]
headers = glob.glob(os.path.join(here, "include", "*.h"))

setup(
    name="fireants_fused_ops",
    version="0.2.0",
    description="Fused CUDA kernels for FireANTs",
    ext_modules=[
        CUDAExtension(
            name="fireants_fused_ops",
            sources=sources,
            include_dirs=[os.path.join(here, "include")],
            extra_compile_args={"cxx": cxx_flags, "nvcc": nvcc_flags},
            depends=headers,
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.8",
    install_requires=["torch>=2.0"],
)
