# Lane NMS used by LaneATT. Adapted from the box NMS of
# https://github.com/gdlg/pytorch_nms (BSD 3-Clause), modified to compare
# lane proposals by their horizontal distance at each row instead of box IoU.
#
# Build & install with:
#   cd lib/nms; python setup.py install; cd -
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name='nms',
      packages=['nms'],
      package_dir={'nms': 'src'},
      ext_modules=[CUDAExtension('nms.details', ['src/nms.cpp', 'src/nms_kernel.cu'])],
      cmdclass={'build_ext': BuildExtension})
