import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))
src = lambda *names: [os.path.join('src', n) for n in names]

setup(
    name='pointnet2',
    version='0.1.0',
    description='PointNet++ CUDA ops (FPS, ball query, grouping, three-nn interpolation)',
    ext_modules=[
        CUDAExtension('pointnet2_cuda', src(
            'pointnet2_api.cpp',
            'ball_query.cpp', 'ball_query_gpu.cu',
            'group_points.cpp', 'group_points_gpu.cu',
            'interpolate.cpp', 'interpolate_gpu.cu',
            'sampling.cpp', 'sampling_gpu.cu',
        ),
        extra_compile_args={'cxx': ['-g'], 'nvcc': ['-O2']})
    ],
    cmdclass={'build_ext': BuildExtension},
)
