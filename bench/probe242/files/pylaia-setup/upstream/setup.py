#!/usr/bin/env python
import os
import re
import subprocess
import sys

from setuptools import find_packages, setup

# PyTorch must be installed *before* nnutils-pytorch: it is compiled at
# install time against the installed torch (and the CUDA toolkit, if found).
# We check the installed version here to give a readable error instead of an
# obscure undefined-symbol at import time.
SUPPORTED_TORCH = ("1.12", "1.13", "2.0", "2.1")


def get_version():
    here = os.path.abspath(os.path.dirname(__file__))
    with open(os.path.join(here, "laia", "__init__.py")) as f:
        m = re.search(r'^__version__ = ["\']([^"\']+)["\']', f.read(), re.M)
    if m is None:
        raise RuntimeError("Unable to find version string.")
    return m.group(1)


def get_commit():
    try:
        return (
            subprocess.check_output(["git", "rev-parse", "--short", "HEAD"])
            .decode("ascii")
            .strip()
        )
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def check_torch():
    try:
        import torch
    except ImportError:
        return
    if not torch.__version__.startswith(SUPPORTED_TORCH):
        sys.stderr.write(
            "WARNING: PyLaia was tested with torch {}, found {}\n".format(
                SUPPORTED_TORCH, torch.__version__
            )
        )
    if torch.version.cuda is None:
        sys.stderr.write(
            "WARNING: torch was built without CUDA support, training will be slow\n"
        )


check_torch()

with open("README.md", encoding="utf-8") as f:
    long_description = f.read()

install_requires = [
    "numpy",
    "scipy",
    "matplotlib",
    "Pillow",
    "natsort",
    "tqdm",
    "dataclasses; python_version < '3.7'",
    "jsonargparse[signatures]==3.19.4",
    "torch>=1.12,<2.2",
    "torchvision>=0.13,<0.17",
    "pytorch-lightning>=1.4.2,<1.9",
    "torchmetrics<0.8.0",
    "nnutils-pytorch>=1.6.0",
    "torchaudio>=0.12,<2.2",
    "textdistance>=4.2.0",
]

extras_require = {
    "dev": ["pytest", "pytest-cov", "pre-commit"],
    "test": ["pandas", "pytest"],
    # Baidu's warp-ctc. Optional, only for --train.ctc_implementation warp
    "warpctc": ["warpctc-pytorch @ git+https://github.com/SeanNaren/warp-ctc.git@pytorch_bindings#subdirectory=pytorch_binding"],
    # GPU monitoring in the progress bar (--train.gpu_stats)
    "gpustats": ["nvidia-ml-py3>=7.352.0"],
}

setup(
    name="pylaia",
    version=get_version(),
    author="Joan Puigcerver",
    author_email="joapuipe@gmail.com",
    maintainer="Carlos Mocholí",
    maintainer_email="carlossmocholi@gmail.com",
    license="MIT",
    url="https://github.com/jpuigcerver/PyLaia",
    description="PyLaia is a device agnostic, PyTorch based, deep learning toolkit specialized for handwritten document analysis.",
    long_description=long_description,
    long_description_content_type="text/markdown",
    download_url="https://github.com/jpuigcerver/PyLaia",
    packages=find_packages(exclude=["tests", "tests.*"]),
    include_package_data=True,
    setup_requires=["setuptools_scm"],
    install_requires=install_requires,
    extras_require=extras_require,
    python_requires=">=3.7,<3.11",
    entry_points={
        "console_scripts": [
            "pylaia-htr-create-model=laia.scripts.htr.create_model:main",
            "pylaia-htr-train-ctc=laia.scripts.htr.train_ctc:main",
            "pylaia-htr-decode-ctc=laia.scripts.htr.decode_ctc:main",
            "pylaia-htr-netout=laia.scripts.htr.netout:main",
            "pylaia-htr-dataset-validate=laia.scripts.htr.dataset.validate:main",
        ]
    },
    classifiers=[
        "Development Status :: 4 - Beta",
        "Environment :: GPU :: NVIDIA CUDA :: 11.7",
        "Intended Audience :: Science/Research",
        "License :: OSI Approved :: MIT License",
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: Scientific/Engineering :: Image Recognition",
    ],
)
