"""Build the C++ MCTS tree (ctree) used by EfficientZero's self-play and reanalyze workers.

    cd core/ctree && bash make.sh    # == python setup.py build_ext --inplace

The tree search itself runs on the host CPU; only batched network inference happens on the accelerator,
so nothing here depends on the GPU toolkit.
"""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))

extra_compile_args = ["-O3", "-std=c++11"]
if sys.platform == "darwin":
    extra_compile_args.append("-stdlib=libc++")
if os.environ.get("CTREE_DEBUG", "0") == "1":
    extra_compile_args = ["-O0", "-g", "-std=c++11"]

ext_modules = [
    Extension(
        "cytree",
        sources=[
            "cytree.pyx",
            "lib/cnode.cpp",
            "lib/cminimax.cpp",
        ],
        include_dirs=[np.get_include(), os.path.join(here, "lib")],
        language="c++",
        extra_compile_args=extra_compile_args,
    ),
]

setup(
    name="ctree",
    version="0.1.0",
    description="C++/Cython MCTS tree for EfficientZero",
    ext_modules=cythonize(
        ext_modules,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False},
    ),
    zip_safe=False,
    install_requires=["numpy>=1.19", "cython>=0.29"],
)
