import setuptools

with open("README.md", "r", encoding="utf-8") as fh:
    long_description = fh.read()

setuptools.setup(
    name="hsemotion",
    version="0.3.0",
    author="Andrey Savchenko",
    author_email="andrey.v.savchenko@gmail.com",
    description="HSEmotion (High-Speed face Emotion recognition) library",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/HSE-asavchenko/face-emotion-recognition",
    packages=setuptools.find_packages(),
    install_requires=[
        'numpy',
        'torch',
        'torchvision',
        'timm==0.9.*',
        'pillow',
    ],
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: Apache Software License",
        "Operating System :: OS Independent",
    ],
    python_requires='>=3.6',
)
