# Build with:
#   cd difusco/utils/cython_merge && python setup.py build_ext --inplace
# The merge is pure CPU code (greedy edge insertion); no CUDA toolkit is needed.
from distutils.core import setup
from Cython.Build import cythonize
import numpy as np

setup(
    ext_modules=cythonize("cython_merge.pyx"),
    include_dirs=[np.get_include()],
)
