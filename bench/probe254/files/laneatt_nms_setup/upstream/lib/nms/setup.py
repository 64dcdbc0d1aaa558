# Lane NMS extension.
#
#   cd lib/nms && python setup.py install
#
# Requires nvcc from a CUDA toolkit that matches the CUDA version PyTorch was built with
# (check with `python -c "import torch; print(torch.version.cuda)"`).
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.dirname(os.path.abspath(__file__))

setup(
    name='nms',
    version='0.1.0',
    description='Line-IoU non-maximum suppression for anchor-based lane proposals',
    packages=['nms'],
    package_dir={'nms': 'src'},
    ext_modules=[
        CUDAExtension('nms.details', [
            os.path.join(here, 'src', 'nms.cpp'),
            os.path.join(here, 'src', 'nms_kernel.cu'),
        ],
                      extra_compile_args={
                          'cxx': ['-O2'],
                          'nvcc': ['-O2', '--expt-relaxed-constexpr'],
                      }),
    ],
    cmdclass={'build_ext': BuildExtension},
    zip_safe=False,
)
