#!/usr/bin/env python
"""Build and install the StyleGAN2 custom ops ahead of time.

The ops (fused bias + leaky ReLU, upfirdn2d) are normally JIT-compiled with
torch.utils.cpp_extension.load() the first time `op` is imported. On clusters
where the compute nodes have no compiler, or where several ranks race to
compile the same extension, build them once here instead:

    STYLEGAN2_EXT=True pip install -e .          # compile the CUDA kernels
    pip install -e .                             # pure-python install, JIT at runtime
"""
import os
import subprocess
import time

from setuptools import find_packages, setup

version_file = 'stylegan2_ops/version.py'


def readme():
    with open('README.md', encoding='utf-8') as f:
        content = f.read()
    return content


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
# TIME: {}
__version__ = '{}'
__gitsha__ = '{}'
version_info = ({})
"""
    sha = get_git_hash()[:7]
    with open('VERSION', 'r') as f:
        SHORT_VERSION = f.read().strip()
    VERSION_INFO = ', '.join([x if x.isdigit() else f'"{x}"' for x in SHORT_VERSION.split('.')])

    version_file_str = content.format(time.asctime(), SHORT_VERSION, sha, VERSION_INFO)
    with open(version_file, 'w') as f:
        f.write(version_file_str)


def get_version():
    with open(version_file, 'r') as f:
        exec(compile(f.read(), version_file, 'exec'))
    return locals()['__version__']


def make_cuda_ext(name, module, sources, sources_cuda=None):
    import torch
    from torch.utils.cpp_extension import CppExtension, CUDAExtension

    if sources_cuda is None:
        sources_cuda = []
    define_macros = []
    extra_compile_args = {'cxx': []}

    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('WITH_CUDA', None)]
        extension = CUDAExtension
        extra_compile_args['nvcc'] = [
            '-D__CUDA_NO_HALF_OPERATORS__',
            '-D__CUDA_NO_HALF_CONVERSIONS__',
            '-D__CUDA_NO_HALF2_OPERATORS__',
            '--use_fast_math',
        ]
        sources += sources_cuda
    else:
        print(f'Compiling {name} without CUDA')
        extension = CppExtension

    return extension(
        name=f'{module}.{name}',
        sources=[os.path.join(*module.split('.'), p) for p in sources],
        define_macros=define_macros,
        extra_compile_args=extra_compile_args)


def get_arch_flags():
    # Build only for the GPUs in this machine unless the user pinned a list.
    import torch
    if os.getenv('TORCH_CUDA_ARCH_LIST'):
        return
    major, minor = torch.cuda.get_device_capability()
    os.environ['TORCH_CUDA_ARCH_LIST'] = f'{major}.{minor}'


def get_requirements(filename='requirements.txt'):
    here = os.path.dirname(os.path.realpath(__file__))
    with open(os.path.join(here, filename), 'r') as f:
        requires = [line.replace('\n', '') for line in f]
    return requires


if __name__ == '__main__':
    cuda_ext = os.getenv('STYLEGAN2_EXT')  # whether compile cuda ext
    if cuda_ext and cuda_ext.lower() in ('true', '1'):
        from torch.utils.cpp_extension import BuildExtension
        get_arch_flags()
        ext_modules = [
            make_cuda_ext(
                name='fused_act_ext',
                module='stylegan2_ops.op',
                sources=['src/fused_bias_act.cpp'],
                sources_cuda=['src/fused_bias_act_kernel.cu']),
            make_cuda_ext(
                name='upfirdn2d_ext',
                module='stylegan2_ops.op',
                sources=['src/upfirdn2d.cpp'],
                sources_cuda=['src/upfirdn2d_kernel.cu']),
        ]
        setup_kwargs = dict(cmdclass={'build_ext': BuildExtension})
    else:
        ext_modules = []
        setup_kwargs = dict()

    write_version_py()
    setup(
        name='stylegan2_ops',
        version=get_version(),
        description='StyleGAN2 fused_bias_act / upfirdn2d ops for PyTorch',
        long_description=readme(),
        long_description_content_type='text/markdown',
        keywords='computer vision, gan, stylegan2',
        url='https://github.com/example/stylegan2-ops',
        include_package_data=True,
        packages=find_packages(exclude=('options', 'datasets', 'experiments', 'results', 'tb_logger', 'wandb')),
        classifiers=[
            'Development Status :: 4 - Beta',
            'License :: OSI Approved :: Apache Software License',
            'Operating System :: OS Independent',
            'Programming Language :: Python :: 3',
            'Programming Language :: Python :: 3.8',
            'Programming Language :: Python :: 3.9',
            'Programming Language :: Python :: 3.10',
        ],
        license='Apache License 2.0',
        setup_requires=['cython', 'numpy', 'torch'],
        install_requires=get_requirements(),
        ext_modules=ext_modules,
        zip_safe=False,
        **setup_kwargs)
