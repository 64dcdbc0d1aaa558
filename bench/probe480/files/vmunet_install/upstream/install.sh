#!/usr/bin/env bash
# Environment used for all VM-UNet experiments (ISIC17 / ISIC18 / Synapse).
# Tested with Ubuntu 20.04, CUDA 11.7, one RTX 3090 24GB.
set -e

conda create -n vmunet python=3.8 -y
source activate vmunet

pip install torch==1.13.0 torchvision==0.14.0 torchaudio==0.13.0 --extra-index-url https://download.pytorch.org/whl/cu117
pip install packaging
pip install timm==0.4.12
pip install pytest chardet yacs termcolor
pip install submitit tensorboardX
pip install triton==2.0.0
pip install causal_conv1d==1.0.0  # causal_conv1d-1.0.0+cu118torch1.13cxx11abiFALSE-cp38-cp38-linux_x86_64.whl
pip install mamba_ssm==1.0.1  # mmamba_ssm-1.0.1+cu118torch1.13cxx11abiFALSE-cp38-cp38-linux_x86_64.whl
pip install scikit-learn matplotlib thop h5py SimpleITK scikit-image medpy yacs

# pre-trained VMamba weights go to ./pre_trained_weights/
mkdir -p pre_trained_weights
echo "Download vmamba_small_e238_ema.pth from the VMamba release page into ./pre_trained_weights/"
