"""
Build the 3D correlation (local cost volume) extension used by the coarse-to-fine
registration decoder (models/correlation.py).

    cd ext/corr3d && python setup.py install            # CUDA build (default)
    CORR3D_CPU_ONLY=1 python setup.py install            # CPU-only build (OpenMP)
    TORCH_CUDA_ARCH_LIST="7.5 8.0 8.6" python setup.py install

The CUDA kernel computes, for every voxel, the dot product between the fixed feature vector
and the moving features in a (2d+1)^3 neighbourhood, which is ~40x faster and needs far less
memory than the shift-and-multiply reference in PyTorch.
"""
import os
from os.path import join

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension

CPU_ONLY = os.environ.get("CORR3D_CPU_ONLY", "0") == "1"
project_root = "src"

source_files = ["corr3d.cpp", "corr3d_cpu.cpp"]

cxx_args = ["-std=c++17", "-fopenmp", "-O3"]


def generate_nvcc_args(gpu_archs):
    nvcc_args = ["-O3", "--use_fast_math", "--expt-relaxed-constexpr"]
    for arch in gpu_archs:
        arch = arch.replace(".", "")
        nvcc_args.extend(["-gencode", f"arch=compute_{arch},code=sm_{arch}"])
    return nvcc_args


gpu_arch = os.environ.get("TORCH_CUDA_ARCH_LIST", "").split()
nvcc_args = generate_nvcc_args(gpu_arch)


def launch_setup():
    if CPU_ONLY:
        Extension = CppExtension
        macro = []
        extra_compile_args = {"cxx": cxx_args}
    else:
        Extension = CUDAExtension
        source_files.append("corr3d_cuda_kernel.cu")
        macro = [("USE_CUDA", None)]
        extra_compile_args = {"cxx": cxx_args, "nvcc": nvcc_args}

    sources = [join(project_root, file) for file in source_files]

    setup(
        name="corr3d",
        version="0.2.1",
        description="3D local correlation / cost volume layer for PyTorch",
        ext_modules=[
            Extension("corr3d_backend",
                      sources,
                      define_macros=macro,
                      extra_compile_args=extra_compile_args,
                      extra_link_args=["-lgomp"])
        ],
        cmdclass={
            "build_ext": BuildExtension
        },
        python_requires=">=3.8",
        install_requires=["torch>=1.10"],
        classifiers=[
            "Programming Language :: Python :: 3",
            "Programming Language :: C++",
            "Environment :: GPU :: NVIDIA CUDA",
        ],
    )


if __name__ == "__main__":
    launch_setup()
