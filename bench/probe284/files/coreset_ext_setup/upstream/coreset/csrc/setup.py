"""Build the fused k-center min-distance kernel.

    cd coreset/csrc && python setup.py install

The kernel computes, for every row x_i of the (N, d) feature matrix, the
squared l2 distance to each new center and folds it into the running
min-distance vector in a single pass (no (N, M) intermediate).  It is only
needed for pools larger than ~1M points; kcenter_greedy.py falls back to
torch.cdist when the extension is missing.
"""
import os
import subprocess

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME


def nvcc_version():
    if not CUDA_HOME:
        return None
    out = subprocess.check_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "-V"]).decode()
    return out.strip().split("release ")[-1].split(",")[0]


if CUDA_HOME is None:
    raise RuntimeError(
        "CUDA_HOME is not set; the kcenter_cuda extension needs the CUDA toolkit (nvcc)."
    )

arch_flags = os.environ.get("KCENTER_ARCH", "-gencode=arch=compute_70,code=sm_70 "
                                              "-gencode=arch=compute_80,code=sm_80 "
                                              "-gencode=arch=compute_86,code=sm_86").split()

print("building kcenter_cuda with nvcc", nvcc_version())

setup(
    name="kcenter_cuda",
    version="0.2.0",
    description="fused min-distance update for greedy k-center (core-set) selection",
    ext_modules=[
        CUDAExtension(
            name="kcenter_cuda",
            sources=["kcenter.cpp", "kcenter_kernel.cu"],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": ["-O3", "--use_fast_math", "-lineinfo"] + arch_flags,
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
