import os
import os.path as osp

from setuptools import find_packages, setup

from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# Build for the common data-centre / workstation GPUs unless the user overrides it.
os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '6.1;7.0;7.5;8.0;8.6')


def get_version():
    version_file = osp.join('softgroup', 'version.py')
    with open(version_file, 'r', encoding='utf-8') as f:
        exec(compile(f.read(), version_file, 'exec'))
    return locals()['__version__']


def get_sparsehash_include():
    # google sparsehash is header only: apt install libsparsehash-dev, or conda install
    # -c bioconda google-sparsehash (then it lives under $CONDA_PREFIX/include)
    include_dirs = []
    conda_prefix = os.environ.get('CONDA_PREFIX')
    if conda_prefix:
        include_dirs.append(osp.join(conda_prefix, 'include'))
    include_dirs.append('/usr/include')
    return include_dirs


if __name__ == '__main__':
    setup(
        name='softgroup',
        version=get_version(),
        description='SoftGroup: SoftGroup for 3D Instance Segmentation [CVPR 2022]',
        author='Thang Vu',
        author_email='thangvubk@kaist.ac.kr',
        packages=find_packages(exclude=('configs', 'tools', 'dataset')),
        package_data={'softgroup.ops': ['*/*.so']},
        ext_modules=[
            CUDAExtension(
                name='softgroup.ops.ops',
                sources=[
                    'softgroup/ops/src/softgroup_api.cpp',
                    'softgroup/ops/src/softgroup_ops.cpp',
                    'softgroup/ops/src/cuda.cu',
                ],
                include_dirs=get_sparsehash_include(),
                define_macros=[('WITH_CUDA', None)],
                extra_compile_args={
                    'cxx': ['-g', '-O2', '-std=c++14'],
                    'nvcc': ['-O2', '--expt-relaxed-constexpr', '-Xcompiler', '-fPIC'],
                })
        ],
        cmdclass={'build_ext': BuildExtension},
        zip_safe=False)
