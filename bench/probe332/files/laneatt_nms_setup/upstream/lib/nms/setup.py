"""Build script for the lane NMS CUDA kernel used by LaneATT.

Run from this folder:

    python setup.py install

The kernel is a port of the "fast NMS" code used by Line-CNN / PointLaneNet,
adapted to compare lanes point-by-point instead of boxes.  It needs nvcc and a
CUDA-enabled PyTorch build.
"""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# Compute capabilities to build for. Override with e.g. NMS_ARCHS="75;86".
_archs = os.environ.get('NMS_ARCHS', '60;61;70;75').split(';')
_gencode = ['-gencode=arch=compute_{0},code=sm_{0}'.format(a) for a in _archs]


def get_long_description():
    here = os.path.abspath(os.path.dirname(__file__))
    readme = os.path.join(here, 'README.md')
    if os.path.exists(readme):
        with open(readme, encoding='utf-8') as f:
            return f.read()
    return ''


setup(name='nms',
      version='0.1.0',
      description='Lane NMS for LaneATT',
      long_description=get_long_description(),
      packages=['nms'],
      package_dir={'nms': 'src'},
      ext_modules=[
          CUDAExtension('nms.details', ['src/nms.cpp', 'src/nms_kernel.cu'],
                        extra_compile_args={
                            'cxx': ['-O2'],
                            'nvcc': ['-O2', '--expt-relaxed-constexpr'] + _gencode,
                        })
      ],
      cmdclass={'build_ext': BuildExtension})
