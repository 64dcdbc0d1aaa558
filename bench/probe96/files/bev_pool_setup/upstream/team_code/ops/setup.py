"""
Builds the CUDA ops used by the camera-LiDAR BEV encoder of the agent:
  * ops.bev_pool.bev_pool_ext   -- BEVFusion-style interval pooling of frustum features into the BEV grid
  * ops.voxel.voxel_layer       -- hard/dynamic voxelization of the LiDAR sweep (mmdet3d)

    cd team_code/ops && python setup.py develop
"""
import os
from setuptools import setup, find_packages

import torch
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

# prebuilt for the GPUs we evaluate on (V100, 2080Ti/T4, A100, 3090/A6000)
os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '7.0;7.5;8.0;8.6')


def make_cuda_ext(name, module, sources, sources_cuda=None, extra_args=None, extra_include_path=None):
    sources_cuda = sources_cuda or []
    extra_args = extra_args or []
    extra_include_path = extra_include_path or []
    define_macros = []
    extra_compile_args = {'cxx': [] + extra_args}

    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('WITH_CUDA', None)]
        extension = CUDAExtension
        extra_compile_args['nvcc'] = extra_args + [
            '-D__CUDA_NO_HALF_OPERATORS__',
            '-D__CUDA_NO_HALF_CONVERSIONS__',
            '-D__CUDA_NO_HALF2_OPERATORS__',
            '-gencode=arch=compute_70,code=sm_70',
            '-gencode=arch=compute_75,code=sm_75',
            '-gencode=arch=compute_80,code=sm_80',
            '-gencode=arch=compute_86,code=sm_86',
        ]
        sources += sources_cuda
    else:
        print('Compiling {} without CUDA'.format(name))
        extension = CppExtension

    return extension(
        name='{}.{}'.format(module, name),
        sources=[os.path.join(*module.split('.'), p) for p in sources],
        include_dirs=extra_include_path,
        define_macros=define_macros,
        extra_compile_args=extra_compile_args,
    )


def get_version():
    version_file = os.path.join('ops', 'version.py')
    if not os.path.exists(version_file):
        return '0.1.0'
    with open(version_file, 'r') as f:
        exec(compile(f.read(), version_file, 'exec'))
    return locals()['__version__']


if __name__ == '__main__':
    setup(
        name='driving_ops',
        version=get_version(),
        description='BEV pooling and voxelization ops for the CARLA agents',
        packages=find_packages(),
        package_data={'ops': ['*/*.so']},
        ext_modules=[
            make_cuda_ext(
                name='bev_pool_ext',
                module='ops.bev_pool',
                sources=['src/bev_pool.cpp', 'src/bev_pool_cuda.cu'],
            ),
            make_cuda_ext(
                name='voxel_layer',
                module='ops.voxel',
                sources=['src/voxelization.cpp', 'src/scatter_points_cpu.cpp', 'src/voxelization_cpu.cpp'],
                sources_cuda=['src/scatter_points_cuda.cu', 'src/voxelization_cuda.cu'],
            ),
        ],
        cmdclass={'build_ext': BuildExtension},
        zip_safe=False,
    )
