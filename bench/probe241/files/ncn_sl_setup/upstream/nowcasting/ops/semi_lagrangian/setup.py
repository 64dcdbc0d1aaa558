"""Build the fused semi-Lagrangian advection kernel used by the extrapolation baseline
and by the evolution operator at inference time.

    cd nowcasting/ops/semi_lagrangian && python setup.py build_ext --inplace

Requires nvcc matching the CUDA version PyTorch was built with (torch.version.cuda).
"""
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))

# A100 / RTX 30xx by default; override with TORCH_CUDA_ARCH_LIST="7.0;7.5" for V100 / T4
nvcc_flags = [
    "-O3",
    "--use_fast_math",
    "-lineinfo",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
]

setup(
    name="sl_advect",
    version="0.2.0",
    description="Semi-Lagrangian advection of radar fields (CUDA)",
    ext_modules=[
        CUDAExtension(
            name="sl_advect_cuda",
            sources=[
                os.path.join(this_dir, "src", "sl_advect.cpp"),
                os.path.join(this_dir, "src", "sl_advect_kernel.cu"),
            ],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
