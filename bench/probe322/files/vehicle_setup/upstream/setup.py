#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""
Install the vehicle re-id toolbox in development mode:

    pip install -r requirements.txt
    python setup.py develop

This builds two kinds of native extensions:
  * the GNN re-ranking graph operators (CUDA, needs nvcc and a visible CUDA_HOME)
  * the Cython rank evaluation (CPU only, falls back to the python evaluator if missing)
"""
import os

import numpy as np
from setuptools import Extension, find_packages, setup

import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

try:
    from Cython.Build import cythonize
except ImportError:
    cythonize = None

requirements = [
    "yacs",
    "tabulate",
    "termcolor",
    "tqdm",
    "faiss-gpu",
    "scikit-learn",
    "tensorboard",
    "Cython",
    "pytorch-ignite==0.4.2",
]

this_dir = os.path.dirname(os.path.abspath(__file__))


def get_version():
    init_py_path = os.path.join(this_dir, "reid", "__init__.py")
    init_py = open(init_py_path, "r").readlines()
    version_line = [l.strip() for l in init_py if l.startswith("__version__")][0]
    version = version_line.split("=")[-1].strip().strip("'\"")
    return version


def get_extensions():
    ext_root = os.path.join("reid", "rerank", "gnn_reranking", "extension")
    extensions = []

    adj_dir = os.path.join(ext_root, "adjacency_matrix")
    extensions.append(CUDAExtension("build_adjacency_matrix", [
        os.path.join(adj_dir, "build_adjacency_matrix.cpp"),
        os.path.join(adj_dir, "build_adjacency_matrix_kernel.cu"),
    ], extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]}))

    prop_dir = os.path.join(ext_root, "propagation")
    extensions.append(CUDAExtension("gnn_propagate", [
        os.path.join(prop_dir, "gnn_propagate.cpp"),
        os.path.join(prop_dir, "gnn_propagate_kernel.cu"),
    ], extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]}))

    # Cython evaluation kernel (CPU only)
    if cythonize is not None:
        rank_ext = Extension(
            "reid.evaluation.rank_cylib.rank_cy",
            [os.path.join("reid", "evaluation", "rank_cylib", "rank_cy.pyx")],
            include_dirs=[np.get_include()],
        )
        extensions.extend(cythonize([rank_ext], language_level=3))

    return extensions


setup(
    name="vehicle-reid",
    version=get_version(),
    author="aicity-reid contributors",
    description="Vehicle re-identification toolbox (AI City Challenge / VeRi-776 / VehicleID)",
    packages=find_packages(exclude=("configs", "tests", "tools")),
    python_requires=">=3.7",
    install_requires=requirements,
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
