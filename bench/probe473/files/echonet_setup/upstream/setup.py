#!/usr/bin/env python3
"""Metadata for package to allow installation with pip."""

import os

import setuptools

exec(open(os.path.join("echonet", "__version__.py")).read())

with open("README.md", "r") as fh:
    long_description = fh.read()

setuptools.setup(
    name="echonet",
    description="Video-based AI for beat-to-beat cardiac function assessment.",
    long_description=long_description,
    long_description_content_type="text/markdown",
    version=__version__,
    url="https://echonet.github.io/dynamic",
    packages=setuptools.find_packages(),
    install_requires=[
        "numpy",
        "pandas",
        "torch",
        "torchvision",
        "opencv-python",
        "scikit-image",
        "tqdm",
        "sklearn"
    ],
    classifiers=[
        "Programming Language :: Python :: 3",
    ],
    entry_points={
        "console_scripts": [
            "echonet=echonet:main",
        ],
    }

)
