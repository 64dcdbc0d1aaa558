#########################################################################
##   This file is part of the auto_LiRPA library, a core part of the   ##
##   alpha-beta-CROWN (alpha,beta-CROWN) neural network verifier.      ##
#########################################################################
"""Optional native kernels.

At the moment there is a single kernel, ``double2float``, which converts a
float64 tensor to float32 while rounding every element in a chosen direction
('up' or 'down'). It is used when intermediate bounds are computed in double
precision and must be stored as float32 without losing soundness: lower bounds
are rounded down, upper bounds are rounded up.

The kernel is written in CUDA (``cuda/cuda_kernels.cu``) and is either
installed ahead of time::

    python auto_LiRPA/cuda_utils.py install

or JIT-compiled with nvcc on first import when the environment variable
``AUTOLIRPA_ENABLE_CUDA_BUILD=1`` is set.
"""
import os
import sys

import torch
from torch.utils.cpp_extension import load, BuildExtension, CUDAExtension
from setuptools import setup


class DummyCudaClass:
    """A dummy class with error message when a CUDA function is called."""
    def __getattr__(self, attr):
        if attr == 'double2float':
            # When the CUDA module is not built successfully, use a workaround.
            def _f(x, d):
                print('WARNING: Missing CUDA kernels. Please enable CUDA build '
                      'by setting environment variable '
                      'AUTOLIRPA_ENABLE_CUDA_BUILD=1 for the correct behavior!')
                return x.float()
            return _f

        def _f(*args, **kwargs):
            raise RuntimeError(f'method {attr} not available because CUDA '
                               'module was not built.')
        return _f


if __name__ == '__main__' and len(sys.argv) > 1:
    # Build and install native CUDA modules that can be directly imported later
    print('Building and installing native CUDA modules...')
    setup(
        name='auto_LiRPA_cuda_utils',
        ext_modules=[CUDAExtension('auto_LiRPA_cuda_utils', [
            'auto_LiRPA/cuda/cuda_utils.cpp',
            'auto_LiRPA/cuda/cuda_kernels.cu'
        ], extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '--use_fast_math']})],
        cmdclass={'build_ext': BuildExtension.with_options()},
    )
    exit(0)

if torch.cuda.is_available() and os.environ.get('AUTOLIRPA_ENABLE_CUDA_BUILD', False):
    try:
        import auto_LiRPA_cuda_utils as _cuda_utils
    except ImportError:
        print('CUDA modules have not been installed')
        try:
            print('Building native CUDA modules...')
            code_dir = os.path.dirname(os.path.abspath(__file__))
            verbose = os.environ.get('AUTOLIRPA_DEBUG_CUDA_BUILD', None) is not None
            _cuda_utils = load(
                'cuda_utils', [os.path.join(code_dir, 'cuda', 'cuda_utils.cpp'),
                               os.path.join(code_dir, 'cuda', 'cuda_kernels.cu')],
                verbose=verbose)
            print('CUDA modules have been built.')
        except Exception:
            print('CUDA module build failure. Some features will be unavailable.')
            print('Please make sure the latest CUDA toolkit is installed in your system.')
            if verbose:
                print(sys.exc_info()[2])
            else:
                print('Set environment variable AUTOLIRPA_DEBUG_CUDA_BUILD=1 to view build log.')
            _cuda_utils = DummyCudaClass()
else:
    if os.environ.get('AUTOLIRPA_ENABLE_CUDA_BUILD', False):
        print('CUDA unavailable. Some features are disabled.')
    _cuda_utils = DummyCudaClass()

double2float = _cuda_utils.double2float


def test_double2float():
    # Sanity check: the rounded value must bracket the original one.
    a = torch.randn(100000, dtype=torch.float64, device='cuda') * 1e-3
    down = double2float(a, 'down')
    up = double2float(a, 'up')
    assert (down.double() <= a).all(), 'rounding down is wrong'
    assert (up.double() >= a).all(), 'rounding up is wrong'
    assert ((up - down) >= 0).all()
    nearest = a.float()
    print('differs from round-to-nearest at',
          (nearest != down).sum().item() + (nearest != up).sum().item(),
          'positions')


if __name__ == '__main__':
    test_double2float()
