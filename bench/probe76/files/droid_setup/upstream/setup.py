"""Build the two compiled backends DROID-SLAM needs.

    python setup.py install          # or: pip install --no-build-isolation .

droid_backends   dense bundle adjustment, correlation lookup, depth filtering
lietorch_backends  Lie group exp/log/act kernels (vendored from princeton-vl/lietorch)

Both are header-heavy (Eigen) and take several minutes to compile; set MAX_JOBS to
limit ninja's parallelism on machines with little RAM.
"""
import os
import os.path as osp

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ROOT = osp.dirname(osp.abspath(__file__))

EIGEN = osp.join(ROOT, 'thirdparty/eigen')
LIETORCH_INCLUDE = osp.join(ROOT, 'thirdparty/lietorch/lietorch/include')

# Pascal .. Ampere; add sm_89/sm_90 for Ada/Hopper if your nvcc supports them
GENCODE = [
    '-gencode=arch=compute_60,code=sm_60',
    '-gencode=arch=compute_61,code=sm_61',
    '-gencode=arch=compute_70,code=sm_70',
    '-gencode=arch=compute_75,code=sm_75',
    '-gencode=arch=compute_80,code=sm_80',
    '-gencode=arch=compute_86,code=sm_86',
]


def read_requirements():
    path = osp.join(ROOT, 'requirements.txt')
    if not osp.isfile(path):
        return []
    with open(path) as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith('#')]


ext_modules = [
    CUDAExtension('droid_backends',
        include_dirs=[EIGEN],
        sources=[
            'src/droid.cpp',
            'src/droid_kernels.cu',
            'src/correlation_kernels.cu',
            'src/altcorr_kernel.cu',
        ],
        extra_compile_args={
            'cxx': ['-O3'],
            'nvcc': ['-O3'] + GENCODE,
        }),

    CUDAExtension('lietorch_backends',
        include_dirs=[LIETORCH_INCLUDE, EIGEN],
        sources=[
            'thirdparty/lietorch/lietorch/src/lietorch.cpp',
            'thirdparty/lietorch/lietorch/src/lietorch_gpu.cu',
            'thirdparty/lietorch/lietorch/src/lietorch_cpu.cpp',
        ],
        extra_compile_args={
            'cxx': ['-O2'],
            'nvcc': ['-O2', '--use_fast_math'] + GENCODE,
        }),
]

setup(
    name='droid_backends',
    version='0.1.0',
    description='Compiled backends for DROID-SLAM',
    packages=['droid_slam', 'droid_slam.geom', 'droid_slam.modules', 'lietorch'],
    package_dir={'droid_slam': 'droid_slam', 'lietorch': 'thirdparty/lietorch/lietorch'},
    install_requires=read_requirements(),
    ext_modules=ext_modules,
    cmdclass={'build_ext': BuildExtension},
    zip_safe=False,
)
