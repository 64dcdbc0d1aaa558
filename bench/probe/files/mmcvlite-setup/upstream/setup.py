import glob
import os
import platform
import re
from pkg_resources import DistributionNotFound, get_distribution
from setuptools import find_packages, setup

EXT_TYPE = ''
try:
    import torch
    if torch.__version__ == 'parrots':
        from parrots.utils.build_extension import BuildExtension
        EXT_TYPE = 'parrots'
    else:
        from torch.utils.cpp_extension import BuildExtension
        EXT_TYPE = 'pytorch'
    cmd_class = {'build_ext': BuildExtension}
except ModuleNotFoundError:
    cmd_class = {}
    print('Skip building ext ops due to the absence of torch.')


def choose_requirement(primary, secondary):
    """If some version of primary requirement installed, return primary, else
    return secondary."""
    try:
        name = re.split(r'[!<>=]', primary)[0]
        get_distribution(name)
    except DistributionNotFound:
        return secondary

    return str(primary)


def get_version():
    version_file = 'mmcv_lite/version.py'
    with open(version_file, encoding='utf-8') as f:
        exec(compile(f.read(), version_file, 'exec'))
    return locals()['__version__']


install_requires = [
    'addict',
    'numpy',
    'packaging',
    'Pillow',
    'pyyaml',
    'yapf',
    'opencv-python>=3',
    'pynvml>=11.0',
    'cupy-cuda12x>=12.0; platform_system == "Linux"',
]


def get_extensions():
    extensions = []

    if os.getenv('MMCV_WITH_OPS', '1') == '0':
        return extensions

    from torch.utils.cpp_extension import CppExtension, CUDAExtension

    # prevent ninja from using too many resources
    try:
        import psutil
        num_cpu = len(psutil.Process().cpu_affinity())
        cpu_use = max(4, num_cpu - 1)
    except (ModuleNotFoundError, AttributeError):
        cpu_use = 4

    os.environ.setdefault('MAX_JOBS', str(cpu_use))
    define_macros = []

    extra_compile_args = {'cxx': []}
    if platform.system() != 'Windows':
        extra_compile_args['cxx'] = ['-std=c++17']

    include_dirs = []

    is_rocm_pytorch = False
    project_dir = 'mmcv_lite/ops/csrc/'
    if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
        define_macros += [('MMCV_WITH_CUDA', None)]
        cuda_args = os.getenv('MMCV_CUDA_ARGS')
        extra_compile_args['nvcc'] = [cuda_args] if cuda_args else []
        extra_compile_args['nvcc'] += [
            '-gencode=arch=compute_70,code=sm_70',
            '-gencode=arch=compute_80,code=sm_80',
            '-gencode=arch=compute_90,code=sm_90',
        ]
        op_files = glob.glob('./mmcv_lite/ops/csrc/pytorch/*.cpp') + \
            glob.glob('./mmcv_lite/ops/csrc/pytorch/cpu/*.cpp') + \
            glob.glob('./mmcv_lite/ops/csrc/pytorch/cuda/*.cu') + \
            glob.glob('./mmcv_lite/ops/csrc/pytorch/cuda/*.cpp')
        extension = CUDAExtension
        include_dirs.append(os.path.abspath('./mmcv_lite/ops/csrc/common'))
        include_dirs.append(os.path.abspath('./mmcv_lite/ops/csrc/common/cuda'))
    else:
        print(f'Compiling {project_dir} only with CPU')
        op_files = glob.glob('./mmcv_lite/ops/csrc/pytorch/*.cpp') + \
            glob.glob('./mmcv_lite/ops/csrc/pytorch/cpu/*.cpp')
        extension = CppExtension
        include_dirs.append(os.path.abspath('./mmcv_lite/ops/csrc/common'))

    if 'nvcc' in extra_compile_args and platform.system() != 'Windows':
        extra_compile_args['nvcc'] += ['-std=c++17']

    ext_ops = extension(
        name='mmcv_lite._ext',
        sources=op_files,
        include_dirs=include_dirs,
        define_macros=define_macros,
        extra_compile_args=extra_compile_args)
    extensions.append(ext_ops)
    return extensions


setup(
    name='mmcv-lite',
    version=get_version(),
    description='OpenMMLab-style computer vision foundation ops',
    keywords='computer vision',
    packages=find_packages(),
    include_package_data=True,
    classifiers=[
        'Development Status :: 4 - Beta',
        'License :: OSI Approved :: Apache Software License',
        'Operating System :: OS Independent',
        'Programming Language :: Python :: 3.8',
        'Programming Language :: Python :: 3.9',
        'Programming Language :: Python :: 3.10',
        'Topic :: Utilities',
    ],
    url='https://github.com/example/mmcv-lite',
    author='MMCV-lite Contributors',
    python_requires='>=3.8',
    install_requires=install_requires,
    extras_require={
        'all': ['pytest', 'onnx', 'onnxruntime'],
        'tests': ['pytest', 'coverage'],
    },
    ext_modules=get_extensions(),
    cmdclass=cmd_class,
    zip_safe=False)
