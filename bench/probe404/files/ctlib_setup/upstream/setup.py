import glob
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))
sources = sorted(glob.glob(os.path.join('src', '*.cpp')) + glob.glob(os.path.join('src', '*.cu')))

setup(
    name='ctlib',
    version='0.2.0',
    author='ctlib contributors',
    description='Fan-beam / parallel-beam CT projection, back-projection and FBP operators for PyTorch',
    long_description=open(os.path.join(here, 'README.md')).read(),
    ext_modules=[
        CUDAExtension(
            name='ctlib',
            sources=sources,
            include_dirs=[os.path.join(here, 'src')],
            extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '--use_fast_math', '-lineinfo']},
        ),
    ],
    cmdclass={'build_ext': BuildExtension},
    python_requires='>=3.6',
    install_requires=['torch>=1.6'],
)
