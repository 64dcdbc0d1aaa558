# Builds the SLAYER CUDA kernels (slayerCuda, slayerLoihiCuda) and installs the slayerSNN python package.
#
#   python setup.py install
#
# Requirements: a CUDA toolkit matching the one PyTorch was built with (nvcc on PATH), PyTorch >= 1.3.
# Set TORCH_CUDA_ARCH_LIST (e.g. "6.1;7.0;7.5") to restrict the generated SASS and speed up the build.
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))

nvcc_flags = ['-O2', '-use_fast_math', '--expt-relaxed-constexpr']
if os.environ.get('SLAYER_DEBUG', '0') == '1':
    nvcc_flags += ['-G', '-lineinfo']

setup(
    name='slayerCuda',
    ext_modules=[
        CUDAExtension('slayerCuda',
                      sources=['src/cuda/slayerKernels.cu'],
                      depends=['src/cuda/spikeKernels.h',
                               'src/cuda/convKernels.h',
                               'src/cuda/shiftKernels.h'],
                      extra_compile_args={'cxx': ['-g'],
                                          'nvcc': nvcc_flags}),
        CUDAExtension('slayerLoihiCuda',
                      sources=['src/cuda/slayerLoihiKernels.cu'],
                      depends=['src/cuda/spikeLoihiKernels.h'],
                      extra_compile_args={'cxx': ['-g'],
                                          'nvcc': ['-O2', '-use_fast_math']}),
    ],
    cmdclass={
        'build_ext': BuildExtension
    })

setup(
    name='slayerSNN',
    version='0.1',
    description='SLAYER: Spike Layer Error Reassignment in Time',
    url='https://github.com/bamsumit/slayerPytorch',
    author='Sumit Bam Shrestha',
    packages=['slayerSNN'],
    package_dir={'slayerSNN': 'src'},
    install_requires=['numpy', 'matplotlib', 'pyyaml', 'h5py', 'torch>=1.3'],
)
