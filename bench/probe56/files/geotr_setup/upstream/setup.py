"""GeoTransformer: Geometric Transformer for Fast and Robust Point Cloud Registration.

    python setup.py build develop

The C++ extension provides grid subsampling and radius-neighbour search used by the
KPConv backbone (geotransformer/extensions).
"""
import os
import re

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))


def get_version():
    with open(os.path.join(HERE, 'geotransformer', '__init__.py'), 'r') as f:
        m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read())
    return m.group(1) if m else '1.0.0'


def get_requirements():
    with open(os.path.join(HERE, 'requirements.txt'), 'r') as f:
        lines = [line.strip() for line in f]
    return [line for line in lines if line and not line.startswith('#')]


def get_long_description():
    readme = os.path.join(HERE, 'README.md')
    if not os.path.exists(readme):
        return ''
    with open(readme, 'r', encoding='utf-8') as f:
        return f.read()


EXT_SOURCES = [
    'geotransformer/extensions/extra/cloud/cloud.cpp',
    'geotransformer/extensions/cpu/grid_subsampling/grid_subsampling.cpp',
    'geotransformer/extensions/cpu/grid_subsampling/grid_subsampling_cpu.cpp',
    'geotransformer/extensions/cpu/radius_neighbors/radius_neighbors.cpp',
    'geotransformer/extensions/cpu/radius_neighbors/radius_neighbors_cpu.cpp',
    'geotransformer/extensions/pybind.cpp',
]

setup(
    name='geotransformer',
    version=get_version(),
    description='Geometric Transformer for Fast and Robust Point Cloud Registration',
    long_description=get_long_description(),
    long_description_content_type='text/markdown',
    packages=find_packages(exclude=('experiments', 'data', 'weights')),
    install_requires=get_requirements(),
    ext_modules=[
        CUDAExtension(
            name='geotransformer.ext',
            sources=EXT_SOURCES,
            extra_compile_args={'cxx': ['-O3', '-std=c++14']},
        ),
    ],
    cmdclass={'build_ext': BuildExtension},
    zip_safe=False,
    python_requires='>=3.7',
    classifiers=[
        'Programming Language :: Python :: 3',
        'Operating System :: POSIX :: Linux',
    ],
)
