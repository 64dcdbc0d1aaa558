import os
import glob
import subprocess

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension


def readme():
    with open('README.md', encoding='utf-8') as f:
        content = f.read()
    return content


version_file = 'clrnet/version.py'


def get_git_hash():
    def _minimal_ext_cmd(cmd):
        # construct minimal environment
        env = {}
        for k in ['SYSTEMROOT', 'PATH', 'HOME']:
            v = os.environ.get(k)
            if v is not None:
                env[k] = v
        # LANGUAGE is used on win32
        env['LANGUAGE'] = 'C'
        env['LANG'] = 'C'
        env['LC_ALL'] = 'C'
        out = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env).communicate()[0]
        return out

    try:
        out = _minimal_ext_cmd(['git', 'rev-parse', 'HEAD'])
        sha = out.strip().decode('ascii')
    except OSError:
        sha = 'unknown'

    return sha


def write_version_py():
    content = """# GENERATED VERSION FILE
__version__ = '{}'
short_version = '{}'
git_hash = '{}'
"""
    sha = get_git_hash()[:7]
    version = '1.0'
    with open(version_file, 'w') as f:
        f.write(content.format(version, version, sha))


def parse_requirements(fname='requirements.txt'):
    """Read the plain requirement names (no version specifiers, no options)."""
    requires = []
    if not os.path.exists(fname):
        return requires
    with open(fname, 'r') as f:
        for line in f.readlines():
            line = line.strip()
            if not line or line.startswith('#') or line.startswith('-'):
                continue
            requires.append(line)
    return requires


def get_extensions():
    extensions = []
    define_macros = []
    extra_compile_args = {'cxx': ['-O3']}
    op_files = glob.glob('./clrnet/ops/csrc/*.cpp')

    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('WITH_CUDA', None)]
        extension = CUDAExtension
        op_files += glob.glob('./clrnet/ops/csrc/*.cu')
        extra_compile_args['nvcc'] = [
            '-D__CUDA_NO_HALF_OPERATORS__',
            '-D__CUDA_NO_HALF_CONVERSIONS__',
            '-D__CUDA_NO_HALF2_OPERATORS__',
        ]
    else:
        raise EnvironmentError('clrnet.ops.nms_impl needs CUDA: no GPU visible and FORCE_CUDA is not set')

    ext_ops = extension(
        name='clrnet.ops.nms_impl',
        sources=op_files,
        define_macros=define_macros,
        extra_compile_args=extra_compile_args,
    )
    extensions.append(ext_ops)

    return extensions


if __name__ == '__main__':
    write_version_py()
    setup(name='clrnet',
          version='1.0',
          keywords='computer vision & lane detection',
          description='PyTorch implementation of a cross layer refinement network for lane detection',
          long_description=readme(),
          long_description_content_type='text/markdown',
          packages=find_packages(exclude=('configs', 'tools', 'demo')),
          include_package_data=True,
          classifiers=[
              'Development Status :: 4 - Beta',
              'License :: OSI Approved :: Apache Software License',
              'Operating System :: POSIX :: Linux',
              'Environment :: GPU :: NVIDIA CUDA',
              'Programming Language :: Python :: 3',
              'Programming Language :: Python :: 3.8',
          ],
          install_requires=parse_requirements('requirements.txt'),
          ext_modules=get_extensions(),
          cmdclass={'build_ext': BuildExtension},
          zip_safe=False)
