"""Build the NFW subhalo deflection kernels used by lens_emulator.ops.ray_trace.

    cd csrc && python setup.py install
    # or, for a specific set of GPUs on the cluster:
    TORCH_CUDA_ARCH_LIST="7.0;8.0;9.0" python setup.py install
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))

nvcc_flags = [
    "-O3",
    "--use_fast_math",
    "-lineinfo",
    "--expt-relaxed-constexpr",
]
if os.environ.get("LENS_OPS_DEBUG", "0") == "1":
    nvcc_flags = ["-O0", "-G", "-lineinfo"]

setup(
    name="lens_ops_cuda",
    version="0.3.0",
    description="CUDA kernels for NFW subhalo deflections (forward + backward)",
    ext_modules=[
        CUDAExtension(
            name="lens_ops_cuda",
            sources=[
                os.path.join(here, "lens_ops.cpp"),
                os.path.join(here, "lens_ops_kernel.cu"),
            ],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": nvcc_flags,
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
