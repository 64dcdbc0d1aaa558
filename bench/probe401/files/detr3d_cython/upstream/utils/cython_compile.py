# Copyright (c) Facebook, Inc. and its affiliates.

"""
Build the Cython box-intersection helper used by the AP calculator.

    python utils/cython_compile.py build_ext --inplace

The extension is CPU-only: it computes exact 3D IoU between rotated boxes on the
host, so no GPU toolchain is involved.  When the module cannot be compiled the AP
calculator falls back to the (much slower) pure-python implementation in
utils/box_util.py.
"""

from setuptools import setup, Extension
from Cython.Build import cythonize
import numpy as np


# hacky way to find numpy include path
# replace with actual path if this does not work
np_include_path = np.__file__.replace("__init__.py", "core/include/")
INCLUDE_PATH = [
    np_include_path
]

setup(
    ext_modules=cythonize(
        Extension(
            "box_intersection",
            sources=["box_intersection.pyx"],
            include_dirs=INCLUDE_PATH,
        )
    ),
)
