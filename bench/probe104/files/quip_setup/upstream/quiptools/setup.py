from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# Build with:  cd quiptools && python setup.py install
# Requires nvcc matching the CUDA version of the installed torch (tested with 12.1, sm_80 / sm_90).

setup(name='quiptools',
      ext_modules=[
          CUDAExtension(name='quiptools_cuda',
                        sources=[
                            'quiptools_wrapper.cpp', 'quiptools.cu',
                            'quiptools_e8p_gemv.cu'
                        ],
                        extra_cuda_cflags=['-lineinfo', '-std=c++17'],
                        extra_compile_args={
                            'cxx': ['-g', '-lcuda'],
                            'nvcc': ['-O3', '-lineinfo', '-arch=sm_80', '--use_fast_math']
                        },
                        extra_link_args=['-lcuda'])
      ],
      cmdclass={'build_ext': BuildExtension})
