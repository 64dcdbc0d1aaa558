import os
from setuptools import setup, find_packages
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

CUTLASS_DIR = os.environ.get(
    "CUTLASS_PATH", os.path.join(os.path.dirname(os.path.abspath(__file__)), "submodules/cutlass")
)

# INT8 tensor-core GEMMs need sm_80 (A100) or newer; sm_86 covers RTX 30xx / A6000.
ARCH_FLAGS = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_86,code=sm_86",
]

setup(
    name='torch_int',
    version='0.0.0',
    description='INT8 GEMM / BMM kernels (CUTLASS) and fused INT8 layers for PyTorch',
    author='Guangxuan Xiao',
    ext_modules=[
        CUDAExtension(
            name='torch_int._CUDA',
            sources=[
                'torch_int/kernels/linear.cu',
                'torch_int/kernels/bmm.cu',
                'torch_int/kernels/fused.cu',
                'torch_int/kernels/bindings.cpp',
            ],
            include_dirs=[
                'torch_int/kernels/include',
                os.path.join(CUTLASS_DIR, 'include'),
                os.path.join(CUTLASS_DIR, 'util/include'),
            ],
            extra_link_args=['-lcublas_static', '-lcublasLt_static',
                             '-lculibos', '-lcudart', '-lcudart_static',
                             '-lrt', '-lpthread', '-ldl', '-L/usr/lib/x86_64-linux-gnu/'],
            extra_compile_args={'cxx': ['-std=c++14', '-O3'],
                                'nvcc': ['-O3', '-std=c++14', '-U__CUDA_NO_HALF_OPERATORS__', '-U__CUDA_NO_HALF_CONVERSIONS__',
                                         '-U__CUDA_NO_HALF2_OPERATORS__', '--expt-relaxed-constexpr'] + ARCH_FLAGS},
        ),
    ],
    cmdclass={
        'build_ext': BuildExtension.with_options(use_ninja=False)
    },
    packages=find_packages(
        exclude=['notebook', 'scripts', 'tests']),
    install_requires=['torch>=1.13'],
)
