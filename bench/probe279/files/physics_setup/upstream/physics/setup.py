"""
Build the friction-cone projection kernel used by physcap_refine.py:

    cd physics && python setup.py install
    # or, for development:  python setup.py build_ext --inplace

Requires nvcc matching the CUDA version of your PyTorch build (check with `python -c "import torch; print(torch.version.cuda)"`).
"""
import os
import subprocess

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

this_dir = os.path.dirname(os.path.abspath(__file__))


def get_cuda_arch_flags():
    # default: Volta, Turing, Ampere, Ada; override with TORCH_CUDA_ARCH_LIST="8.6"
    if os.environ.get('TORCH_CUDA_ARCH_LIST'):
        return []
    return ['-gencode=arch=compute_70,code=sm_70',
            '-gencode=arch=compute_75,code=sm_75',
            '-gencode=arch=compute_80,code=sm_80',
            '-gencode=arch=compute_86,code=sm_86',
            '-gencode=arch=compute_89,code=sm_89']


def nvcc_version():
    try:
        out = subprocess.check_output([os.path.join(CUDA_HOME, 'bin', 'nvcc'), '-V']).decode()
        return out.strip().split('\n')[-1]
    except Exception:
        return 'unknown'


if CUDA_HOME is None:
    raise RuntimeError('CUDA_HOME is not set; the contact_lcp_cuda extension needs nvcc')
print('building contact_lcp_cuda with', nvcc_version())

setup(
    name='contact_lcp_cuda',
    version='0.2.0',
    description='Friction-cone projection (LCP) kernel for physics-aware IMU pose refinement',
    ext_modules=[
        CUDAExtension(
            name='contact_lcp_cuda',
            sources=[os.path.join(this_dir, 'csrc', 'contact_lcp.cpp'),
                     os.path.join(this_dir, 'csrc', 'contact_lcp_kernel.cu')],
            extra_compile_args={'cxx': ['-O3', '-std=c++17'],
                                'nvcc': ['-O3', '--use_fast_math', '-std=c++17'] + get_cuda_arch_flags()},
        )
    ],
    cmdclass={'build_ext': BuildExtension},
    zip_safe=False,
)
