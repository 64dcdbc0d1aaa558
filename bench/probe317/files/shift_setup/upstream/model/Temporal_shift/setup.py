# Build the temporal shift CUDA kernel used by Shift-GCN's shift_tcn:
#   cd model/Temporal_shift && bash run.sh      (== python setup.py install)
# Needs nvcc matching the CUDA version PyTorch was built with.
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='shift_cuda_linear_cpp',
    version='0.1',
    ext_modules=[
        CUDAExtension('shift_cuda', [
            'cuda/shift_cuda.cpp',
            'cuda/shift_cuda_kernel.cu',
        ],
            extra_compile_args={'cxx': ['-O3'],
                                'nvcc': ['-O3', '--use_fast_math']}),
    ],
    cmdclass={
        'build_ext': BuildExtension
    })
