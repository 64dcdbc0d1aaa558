# Motion Transformer (MTR): https://arxiv.org/abs/2209.13508
# Written by Shaoshuai Shi
# All Rights Reserved

import os
import subprocess

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


def get_git_commit_number():
    if not os.path.exists('.git'):
        return '0000000'

    cmd_out = subprocess.run(['git', 'rev-parse', 'HEAD'], stdout=subprocess.PIPE)
    git_commit_number = cmd_out.stdout.decode('utf-8')[:7]
    return git_commit_number


def make_cuda_ext(name, module, sources):
    cuda_ext = CUDAExtension(
        name='%s.%s' % (module, name),
        sources=[os.path.join(*module.split('.'), src) for src in sources],
        extra_compile_args={
            'cxx': ['-g'],
            'nvcc': ['-O2', '-gencode=arch=compute_70,code=sm_70', '-gencode=arch=compute_80,code=sm_80'],
        },
    )
    return cuda_ext


def write_version_to_file(version, target_file):
    with open(target_file, 'w') as f:
        print('__version__ = "%s"' % version, file=f)


if __name__ == '__main__':
    version = '0.1.0+%s' % get_git_commit_number()
    write_version_to_file(version, 'mtr/version.py')

    setup(
        name='MotionTransformer',
        version=version,
        description='Motion Transformer (MTR): A Strong Baseline for Multimodal Motion Prediction in Autonomous Driving',
        install_requires=[
            'numpy',
            'torch>=1.1',
            'tensorboardX',
            'easydict',
            'pyyaml',
            'scikit-image',
            'tqdm',
        ],

        author='Shaoshuai Shi',
        author_email='shaoshuaics@gmail.com',
        license='Apache License 2.0',
        packages=find_packages(exclude=['tools', 'data', 'output']),
        cmdclass={
            'build_ext': BuildExtension,
        },
        ext_modules=[
            make_cuda_ext(
                name='knn_cuda',
                module='mtr.ops.knn',
                sources=[
                    'src/knn.cpp',
                    'src/knn_gpu.cu',
                    'src/knn_api.cpp',
                ],
            ),
            make_cuda_ext(
                name='attention_cuda',
                module='mtr.ops.attention',
                sources=[
                    'src/attention_api.cpp',
                    'src/attention_func_v2.cpp',
                    'src/attention_weight_computation_kernel_v2.cu',
                    'src/attention_value_computation_kernel_v2.cu',
                    'src/attention_func.cpp',
                    'src/attention_weight_computation_kernel.cu',
                    'src/attention_value_computation_kernel.cu',
                ],
            ),
        ],
    )
