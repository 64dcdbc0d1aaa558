import platform

import setuptools

with open("README.md", "r", encoding="utf-8") as fh:
    long_description = fh.read()


def build_additional_requires():
    py_version = platform.python_version()[:4]
    if py_version in ["3.7.", "3.8.", "3.9."]:
        additional_requires = ["speexdsp_ns==0.1.2"]
    else:
        additional_requires = []
    if platform.system() == "Linux" and platform.machine() == "x86_64":
        additional_requires.append("tflite-runtime>=2.8.0,<3")
    return additional_requires


setuptools.setup(
    name="openwakeword",
    version="0.6.0",
    install_requires=[
        "onnxruntime>=1.10.0,<2",
        "tqdm>=4.0,<5.0",
        "scipy>=1.3,<2",
        "scikit-learn>=1,<2",
        "requests>=2.0,<3",
    ] + build_additional_requires(),
    extras_require={
        "test": [
            "pytest>=7.2.0,<8",
            "pytest-cov>=2.10.1,<3",
            "pytest-flake8>=1.1.1,<2",
            "flake8>=4.0,<4.1",
            "pytest-mypy>=0.10.0,<1",
            "types-requests",
            "types-PyYAML",
            "mock>=5.1,<6",
            "types-mock>=5.1,<6",
            "types-requests>=2.0,<3",
        ],
        # GPU feature extraction for --augment_clips; requires CUDA 11.8 + cuDNN 8 on the host
        "gpu": [
            "onnxruntime-gpu>=1.16,<1.17",
        ],
        "full": [
            "mutagen>=1.46.0,<2",
            "speechbrain>=0.5.13,<1",
            "audiomentations>=0.30.0,<1",
            "torch-audiomentations>=0.11.0,<1",
            "acoustics>=0.2.6,<1",
            "pronouncing>=0.2.0,<1",
            "datasets>=2.14.4,<3",
            "deep-phonemizer==0.0.19",
            "torch>=1.13.1,<3",
            "torchaudio>=0.13.1,<3",
            "torchinfo>=1.8.0,<2",
            "torchmetrics>=0.11.4,<1",
            "PyYAML>=6.0,<7",
        ],
    },
    author="David Scripka",
    author_email="david.scripka@gmail.com",
    description="An open-source audio wake word (or phrase) detection framework with a focus on performance and simplicity",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/dscripka/openwakeword",
    project_urls={
        "Bug Tracker": "https://github.com/dscripka/openwakeword/issues",
    },
    license="Apache-2.0",
    packages=setuptools.find_packages(),
    include_package_data=True,
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: Apache Software License",
        "Operating System :: OS Independent",
    ],
    python_requires=">=3.7",
)
