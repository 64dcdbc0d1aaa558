# Build: cd adder_cuda && python setup.py install
# Needs nvcc from the same CUDA version PyTorch was built with (check torch.version.cuda).
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='addernet-kernels',
    version='0.2.0',
    description='CUDA kernels for AdderNet (L1-distance convolution)',
    ext_modules=[
        CUDAExtension(
            name='adder_cuda',
            sources=[
                'adder_cuda.cpp',
                'adder_cuda_kernel.cu',
            ],
            extra_compile_args={
                'cxx': ['-O3', '-std=c++14'],
                'nvcc': ['-O3', '--use_fast_math', '-gencode=arch=compute_70,code=sm_70',
                         '-gencode=arch=compute_75,code=sm_75'],
            },
        ),
    ],
    cmdclass={'build_ext': BuildExtension},
)
