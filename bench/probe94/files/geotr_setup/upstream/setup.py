import os
import os.path as osp

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


def get_version():
    version_file = osp.join('geotransformer', '__init__.py')
    with open(version_file, 'r') as f:
        for line in f:
            if line.startswith('__version__'):
                return line.split('=')[1].strip().strip('\'"')
    return '1.0.0'


def get_requirements(filename='requirements.txt'):
    here = osp.dirname(osp.abspath(__file__))
    path = osp.join(here, filename)
    if not osp.exists(path):
        return []
    with open(path, 'r') as f:
        requirements = [line.strip() for line in f.readlines()]
    return [req for req in requirements if req and not req.startswith('#')]


def get_extensions():
    # The grid subsampling and radius neighbor kernels come from KPConv and
    # run on the host; they are only used inside the data loader collate_fn.
    ext_root = osp.join('geotransformer', 'extensions')
    sources = [
        osp.join(ext_root, 'extra', 'cloud', 'cloud.cpp'),
        osp.join(ext_root, 'cpu', 'grid_subsampling', 'grid_subsampling.cpp'),
        osp.join(ext_root, 'cpu', 'grid_subsampling', 'grid_subsampling_cpu.cpp'),
        osp.join(ext_root, 'cpu', 'radius_neighbors', 'radius_neighbors.cpp'),
        osp.join(ext_root, 'cpu', 'radius_neighbors', 'radius_neighbors_cpu.cpp'),
        osp.join(ext_root, 'pybind.cpp'),
    ]
    extra_compile_args = {
        'cxx': ['-O3', '-std=c++17', '-fopenmp'],
        'nvcc': ['-O3', '--expt-relaxed-constexpr'],
    }
    ext_modules = [
        CUDAExtension(
            name='geotransformer.ext',
            sources=sources,
            extra_compile_args=extra_compile_args,
            extra_link_args=['-fopenmp'],
        )
    ]
    return ext_modules


os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '6.1;7.0;7.5;8.0;8.6+PTX')

setup(
    name='geotransformer',
    version=get_version(),
    description='Geometric Transformer for Fast and Robust Point Cloud Registration',
    author='Zheng Qin',
    url='https://github.com/qinzheng93/GeoTransformer',
    license='MIT',
    packages=find_packages(exclude=('experiments', 'data', 'weights', 'assets')),
    python_requires='>=3.8',
    install_requires=get_requirements(),
    ext_modules=get_extensions(),
    cmdclass={'build_ext': BuildExtension},
    zip_safe=False,
    classifiers=[
        'Programming Language :: Python :: 3',
        'License :: OSI Approved :: MIT License',
        'Operating System :: POSIX :: Linux',
        'Environment :: GPU :: NVIDIA CUDA',
    ],
)
