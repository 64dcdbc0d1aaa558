#!/bin/bash
# Commands to setup a new virtual environment and install all the necessary packages

set -e

pip install --upgrade pip

python3.11 -m venv fmri
source fmri/bin/activate

pip install numpy matplotlib jupyter jupyterlab_nvdashboard jupyterlab tqdm scikit-image==0.22.0 \
    accelerate webdataset pandas einops ftfy regex kornia h5py open_clip_torch \
    torch==2.1.0 torchvision==0.16.0 \
    xformers==0.0.22.post7 \
    transformers torchmetrics diffusers==0.23.0 deepspeed==0.13.1 \
    wandb nilearn nibabel boto3 omegaconf pytorch-lightning==2.0.1 \
    dalle2-pytorch sentence-transformers==2.2.2

pip install git+https://github.com/openai/CLIP.git --no-deps
