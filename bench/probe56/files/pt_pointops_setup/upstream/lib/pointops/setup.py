# python3 setup.py install
#
# Builds the `pointops_cuda` extension used by lib/pointops/functions/pointops.py
# (kNN query, furthest sampling, grouping, interpolation, subtraction, aggregation).
import os
import sys
from distutils.sysconfig import get_config_vars

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

(opt,) = get_config_vars('OPT')
os.environ['OPT'] = " ".join(
    flag for flag in opt.split() if flag != '-Wstrict-prototypes'
)

_OPS = [
    "knnquery",
    "sampling",
    "grouping",
    "interpolation",
    "subtraction",
    "aggregation",
]

sources = ['src/pointops_api.cpp']
for op in _OPS:
    sources.append('src/{0}/{0}_cuda.cpp'.format(op))
    sources.append('src/{0}/{0}_cuda_kernel.cu'.format(op))

# Build only for the card in this machine unless the user says otherwise; a fat binary
# for every architecture takes ~10 minutes.
if "TORCH_CUDA_ARCH_LIST" not in os.environ and torch.cuda.is_available():
    major, minor = torch.cuda.get_device_capability()
    os.environ["TORCH_CUDA_ARCH_LIST"] = "{}.{}".format(major, minor)


class BuildExtensionQuiet(BuildExtension):
    """BuildExtension that drops a couple of noisy host-compiler warnings."""

    def build_extensions(self):
        for ext in self.extensions:
            cxx = ext.extra_compile_args.setdefault('cxx', [])
            cxx.append('-Wno-sign-compare')
        super().build_extensions()


for arg in list(sys.argv):
    if arg == '--debug-kernels':
        sys.argv.remove(arg)
        _nvcc_flags = ['-O0', '-G', '-lineinfo']
        break
else:
    _nvcc_flags = ['-O2']

setup(
    name='pointops',
    version='0.1.0',
    description='Point Transformer operators',
    ext_modules=[
        CUDAExtension('pointops_cuda', sources,
                      extra_compile_args={'cxx': ['-g'], 'nvcc': _nvcc_flags}),
    ],
    cmdclass={'build_ext': BuildExtensionQuiet},
    zip_safe=False,
)
