from setuptools import find_packages, setup

with open("README.md", "r", encoding="utf-8") as fh:
    long_description = fh.read()

setup(
    name="deepdespeckling",
    version="0.7",
    author="Emanuele Dalsasso, Youcef Kemiche, Pierre Blanchard, Hadrien Mariaccia",
    author_email="engineer@hi-paris.fr",
    description="Speckle reduction for SAR images with deep learning (MERLIN, SAR2SAR)",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/hi-paris/deepdespeckling",
    packages=find_packages(),
    include_package_data=True,
    package_data={"deepdespeckling": ["merlin/saved_model/*.pth", "sar2sar/saved_model/*.pth"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: MIT License",
        "Operating System :: OS Independent",
        "Topic :: Scientific/Engineering :: Image Processing",
    ],
    python_requires=">=3.8",
    install_requires=[
        "numpy>=1.21",
        "scipy>=1.7",
        "torch>=1.13",
        "Pillow>=9.0",
        "opencv-python>=4.5",
        "tqdm",
        "matplotlib",
    ],
)
