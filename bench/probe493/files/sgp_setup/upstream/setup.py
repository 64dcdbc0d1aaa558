import os
from setuptools import setup, find_packages
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

VERSION = os.environ.get('SIMPLEX_GP_VERSION', '0.1.0')

with open('README.md') as f:
    README = f.read()

# The permutohedral-lattice filtering kernel is only implemented for CUDA.
# Set TORCH_CUDA_ARCH_LIST to restrict the build to the GPUs you have, e.g.
#   TORCH_CUDA_ARCH_LIST="7.0;8.0" pip install -e .
setup(
    name='gpytorch-lattice-kernel',
    description='Simplex-GPs: Scalable Gaussian Processes with Permutohedral Lattice Kernels',
    long_description=README,
    long_description_content_type='text/markdown',
    version=VERSION,
    author='Sanyam Kapoor',
    license='Apache License 2.0',
    classifiers=[
        'Development Status :: 4 - Beta',
        'License :: OSI Approved :: Apache Software License',
        'Programming Language :: Python :: 3.8',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
    packages=find_packages(exclude=['experiments', 'experiments.*', 'notebooks']),
    python_requires='>=3.7',
    install_requires=[
        'gpytorch>=1.4.0',
        'torch>=1.7.0',
        'tqdm',
    ],
    extras_require={
        'experiments': ['fire', 'wandb', 'pandas', 'scipy', 'scikit-learn'],
    },
    ext_modules=[
        CUDAExtension('gpytorch_lattice_kernel.lattice_cuda', [
            'gpytorch_lattice_kernel/csrc/lattice.cpp',
            'gpytorch_lattice_kernel/csrc/lattice_kernel.cu',
        ],
        extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '--use_fast_math', '--expt-relaxed-constexpr']}),
    ],
    cmdclass={
        'build_ext': BuildExtension
    },
)
