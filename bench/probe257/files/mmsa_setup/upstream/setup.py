import setuptools

with open("README.md", "r", encoding="utf-8") as fh:
    long_description = fh.read()

setuptools.setup(
    name="MMSA",
    version="2.2.1",
    author="THUIAR",
    author_email="mmsa-dev@example.org",
    description="A unified framework for Multimodal Sentiment Analysis",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/thuiar/MMSA",
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: MIT License",
        "Operating System :: POSIX :: Linux",
        "Environment :: GPU :: NVIDIA CUDA :: 11.3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    package_dir={"": "src"},
    package_data={"": ["config/*.json", "**/*.sh", "**/*.txt"]},
    include_package_data=True,
    packages=setuptools.find_packages(where="src"),
    python_requires=">=3.8",
    install_requires=[
        "easydict>=1.9",
        "gdown>=4.4",
        "numpy>=1.20",
        "pandas>=1.2",
        "pynvml>=11.0",
        "scikit-learn>=0.24",
        "torch>=1.11",
        "tqdm>=4.62",
        "transformers>=4.4",
        "sentencepiece>=0.1.96",
        "protobuf>=3.20",
    ],
    entry_points={
        "console_scripts": [
            "mmsa = MMSA.__main__:main",
        ],
    },
)
