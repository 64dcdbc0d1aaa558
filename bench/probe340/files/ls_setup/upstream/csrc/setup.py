"""Build the batched 2-opt / Or-opt local-search kernels used to refine tours produced by the
neural solvers (one thread block per tour, best-improvement move per iteration).

    cd csrc && python setup.py install        # or: pip install -e csrc --no-build-isolation

Set TORCH_CUDA_ARCH_LIST to restrict the architectures you compile for (faster builds).
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

this_dir = os.path.dirname(os.path.abspath(__file__))


def get_extensions():
    if CUDA_HOME is None:
        raise RuntimeError(
            "CUDA_HOME not found: the local-search kernels need nvcc (CUDA >= 11.0). "
            "Without them local_search/two_opt.py falls back to the (slow) PyTorch implementation."
        )

    nvcc_flags = ["-O3", "--use_fast_math", "-lineinfo", "--expt-relaxed-constexpr"]
    for arch in os.getenv("TORCH_CUDA_ARCH_LIST", "7.0;8.0;8.6").split(";"):
        nvcc_flags.append("-gencode=arch=compute_{0},code=sm_{0}".format(arch.replace(".", "")))

    return [
        CUDAExtension(
            name="batched_two_opt_cuda",
            sources=[
                os.path.join(this_dir, "two_opt.cpp"),
                os.path.join(this_dir, "two_opt_kernel.cu"),
                os.path.join(this_dir, "or_opt_kernel.cu"),
            ],
            include_dirs=[os.path.join(this_dir, "include")],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
        )
    ]


setup(
    name="batched_two_opt",
    version="0.2.0",
    description="Batched 2-opt and Or-opt local search for TSP/CVRP tours on GPU",
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
