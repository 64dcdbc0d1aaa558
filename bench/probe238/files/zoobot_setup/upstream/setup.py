import setuptools

with open("README.md", "r") as fh:
    long_description = fh.read()

setuptools.setup(
    name="zoobot",
    version="2.0.1",
    author="Mike Walmsley",
    author_email="walmsleymk1@gmail.com",
    description="Galaxy morphology classifiers",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/mwalmsley/zoobot",
    packages=setuptools.find_packages(),
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: GNU General Public License v3 (GPLv3)",
        "Operating System :: OS Independent",
        "Development Status :: 4 - Beta",
        "Environment :: GPU :: NVIDIA CUDA"
    ],
    packages_data={'zoobot': ['zoobot/shared/label_metadata.py']},
    python_requires=">=3.9",  # recommend 3.9 for new users. TF needs >=3.7.2, torchvision>=3.7, datasets>=3.8
    extras_require={
        'pytorch-cpu': [
            # A100 GPU currently only seems to support cuda 11.3 on manchester cluster, let's stick with this version for now
            # very latest version wants cuda 11.6
            'torch == 2.1.0',
            'torchvision == 0.16.0',
            'torchaudio >= 2.1.0',
            'lightning >= 2.0.0',
            'simplejpeg',
            'albumentations',
            'pyro-ppl >= 1.8.0',
            'torchmetrics == 0.11.0',
            'timm >= 0.9.10'
        ],
        'pytorch-m1': [
            # as above but without the CUDA requirements for M1 Macs
            'torch == 2.1.0',
            'torchvision == 0.16.0',
            'torchaudio >= 2.1.0',
            'lightning >= 2.0.0',
            'albumentations',
            'pyro-ppl >= 1.8.0',
            'torchmetrics == 0.11.0',
            'timm >= 0.9.10'
        ],
        # as above but without pytorch itself
        # for GPU, you will also need e.g. cudatoolkit=11.3, 11.6
        # e.g. pip install -e "zoobot[pytorch-cu118]" --extra-index-url https://download.pytorch.org/whl/cu118
        'pytorch-cu118': [
            'torch == 2.1.0+cu118',
            'torchvision == 0.16.0+cu118',
            'torchaudio >= 2.1.0',
            'lightning >= 2.0.0',
            'simplejpeg',
            'albumentations',
            'pyro-ppl >= 1.8.0',
            'torchmetrics == 0.11.0',
            'timm >= 0.9.10'
        ],
        'pytorch-colab': [
            # colab includes pytorch already
            'lightning >= 2.0.0',
            'albumentations',
            'pyro-ppl>=1.8.0',
            'torchmetrics==0.11.0',
            'timm >= 0.9.10',
            'datasets',
            'webdataset'
        ],
        'tensorflow': [
            'tensorflow == 2.10.0',  # 2.11.0 turns on XLA somewhere which then fails on multi-GPU...TODO
            'keras_applications',
            'tensorflow_probability == 0.18.0',  # 0.19 requires tf 2.11
            'protobuf <= 3.19'  # tensorflow incompatible above this (usually resolved by pip automatically)
        ],
        'utilities': [
            'seaborn',  # for nice plots
            'boto3',    # for AWs s3 access
            'python-dateutil == 2.8.1',  # for boto3
        ],
        'docs': [
            'Sphinx',
            'sphinxcontrib-napoleon',
            'furo',
            'docutils<0.18',
            'sphinxemoji'
        ]
    },
    install_requires=[
        'h5py',
        'tqdm',
        'pillow',
        'numpy',
        'pandas',
        'scipy',
        'scikit-image >= 0.19.2',
        'scikit-learn >= 1.0.2',
        'matplotlib',
        'pyarrow',  # to read parquet, which is very handy for big datasets
        # for saving metrics to weights and biases (cloud service, free within limits)
        'wandb',
        'webdataset',  # for reading webdataset files
        'huggingface_hub',  # login might be required
        'setuptools',  # no longer pinned
        'galaxy-datasets >= 0.0.21'  # for dataset loading in both TF and Torch (see github/mwalmsley/galaxy-datasets)
    ]
)
