import os
from setuptools import setup, find_packages

here = os.path.abspath(os.path.dirname(__file__))

with open(os.path.join(here, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="neural-style",
    version="0.5.7",
    description="A PyTorch implementation of the paper 'A Neural Algorithm of Artistic Style'",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/ProGamerGov/neural-style-pt",
    author="ProGamerGov",
    license="MIT",
    classifiers=[
        "Development Status :: 4 - Beta",
        "Intended Audience :: Developers",
        "Intended Audience :: Science/Research",
        "License :: OSI Approved :: MIT License",
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: Multimedia :: Graphics",
    ],
    keywords=["neural artistic style", "style transfer", "pytorch", "vgg", "lbfgs"],
    packages=find_packages(exclude=["examples", "models"]),
    py_modules=["neural_style", "CaffeLoader"],
    python_requires=">=3.5",
    install_requires=["torch>=0.4.0", "torchvision>=0.2.1", "pillow"],
    entry_points={
        "console_scripts": [
            "neural-style=neural_style:main",
            "neural-style-pt=neural_style:main",
        ],
    },
)
