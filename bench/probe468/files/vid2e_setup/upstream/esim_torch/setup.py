from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='esim_torch',
    version='0.1.0',
    description='GPU implementation of the ESIM event camera simulator',
    package_dir={'': 'esim_torch'},
    packages=['esim_torch'],
    ext_modules=[
        CUDAExtension(name='esim_cuda',
                      sources=['esim_torch/esim_cuda_kernel.cu'],
                      extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '--use_fast_math']},
                      ),
    ],
    cmdclass={
        'build_ext': BuildExtension
    },
    install_requires=['numpy', 'torch'],
)
