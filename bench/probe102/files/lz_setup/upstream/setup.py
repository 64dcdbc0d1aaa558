"""Build script for the LightZero package.

The MCTS trees (ptree = pure python, ctree = C++ via Cython) are compiled here.
The C++ trees run on the CPU in the collector/evaluator processes; the networks
that produce the priors live on whatever device the policy config selects
(policy.cuda / policy.device), so nothing in this file depends on CUDA.
"""
import os
import platform
import re
import sys

import numpy as np
from setuptools import Extension, find_packages, setup

here = os.path.abspath(os.path.dirname(__file__))


def _load_req(file: str):
    with open(file, 'r', encoding='utf-8') as f:
        return [line.strip() for line in f.readlines() if line.strip() and not line.startswith('#')]


def find_pyx(path=None):
    path = path or os.path.join(here, 'lzero')
    pyx_files = []
    for root, dirs, filenames in os.walk(path):
        for fname in filenames:
            if fname.endswith('.pyx'):
                pyx_files.append(os.path.join(root, fname))
    return pyx_files


def find_cython_extensions(path=None):
    extensions = []
    for item in find_pyx(path):
        relpath = os.path.relpath(os.path.abspath(item), start=here)
        rpath, _ = os.path.splitext(relpath)
        extname = '.'.join(rpath.split(os.path.sep))
        extensions.append(Extension(
            extname, [item],
            include_dirs=[np.get_include()],
            language="c++",
            extra_compile_args=['-std=c++11', '-O3'] if platform.system() != 'Windows' else ['/std:c++14', '/O2'],
            extra_link_args=[] if platform.system() != 'Darwin' else ['-stdlib=libc++'],
        ))
    return extensions


_LINETRACE = not not os.environ.get('LINETRACE', None)

requirements = _load_req('requirements.txt')

with open(os.path.join(here, 'README.md'), 'r', encoding='utf-8') as f:
    long_description = f.read()

with open(os.path.join(here, 'lzero', '__init__.py'), 'r', encoding='utf-8') as f:
    version = re.search(r"__VERSION__\s*=\s*['\"]([^'\"]+)['\"]", f.read()).group(1)

if __name__ == '__main__':
    from Cython.Build import cythonize

    ext_modules = cythonize(
        find_cython_extensions(),
        language_level=3,
        compiler_directives=dict(
            linetrace=_LINETRACE,
        ),
    )

    setup(
        name='LightZero',
        version=version,
        description='A lightweight and efficient MCTS/AlphaZero/MuZero algorithm toolkits.',
        long_description=long_description,
        long_description_content_type='text/markdown',
        author='opendilab',
        author_email='opendilab@pjlab.org.cn',
        url='https://github.com/opendilab/LightZero',
        license='Apache License, Version 2.0',
        keywords='Reinforcement Learning, MCTS',
        packages=[
            # framework
            *find_packages(include=('lzero', "lzero.*")),
            # application
            *find_packages(include=('zoo', 'zoo.*')),
        ],
        package_data={
            package_name: ['*.yaml', '*.pyi', '*.h', '*.cpp', '*.pyx']
            for package_name in find_packages(include=('lzero.*',))
        },
        python_requires=">=3.7",
        install_requires=requirements,
        ext_modules=ext_modules,
    )
