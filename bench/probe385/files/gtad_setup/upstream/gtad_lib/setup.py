from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# Build the 1D RoIAlign (Align1D) op used by SGAlign.
#   cd gtad_lib && python setup.py install
# Requires nvcc matching the CUDA version torch was built with.

setup(
    name='Align1D',
    version='2.2.0',
    ext_modules=[
        CUDAExtension(
            name='Align1D',
            sources=['Align1D_cuda.cpp', 'Align1D_cuda_kernal.cu'],
            extra_compile_args={'cxx': [], 'nvcc': ['-O2']}
        ),
    ],
    cmdclass={
        'build_ext': BuildExtension
    }
)
