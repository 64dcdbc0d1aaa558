#!/bin/bash
# Setup script for MICA. Tested on Ubuntu 20.04 with an NVIDIA RTX 3090 / A100, CUDA 11.3
urle () { [[ "${1}" ]] || return 1; local LANG=C i x; for (( i = 0; i < ${#1}; i++ )); do x="${1:i:1}"; [[ "${x}" == [a-zA-Z0-9.~-] ]] && echo -n "${x}" || printf '%%%02X' "'${x}"; done; echo; }

set -e

# username and password input
echo -e "\nIf you do not have an account you can register at https://flame.is.tue.mpg.de/ following the installation instruction."
read -p "Username (FLAME):" username
read -p "Password (FLAME):" password
username=$(urle $username)
password=$(urle $password)

echo -e "\nDownloading FLAME..."
mkdir -p data/FLAME2020/
wget --post-data "username=$username&password=$password" 'https://download.is.tue.mpg.de/download.php?domain=flame&sfile=FLAME2020.zip&resume=1' -O './FLAME2020.zip' --no-check-certificate --continue
unzip FLAME2020.zip -d data/FLAME2020/
rm -rf FLAME2020.zip

echo -e "\nDownload pretrained MICA model..."
mkdir -p data/pretrained
wget -O data/pretrained/mica.tar "https://keeper.mpdl.mpg.de/f/db172dc4bd4f4c0f96de/?dl=1"

echo -e "\nCreating conda environment..."
conda create -n MICA python=3.8 -y
eval "$(conda shell.bash hook)"
conda activate MICA

echo -e "\nInstalling PyTorch (CUDA 11.3)..."
pip install torch==1.10.0+cu113 torchvision==0.11.1+cu113 -f https://download.pytorch.org/whl/torch_stable.html

echo -e "\nInstalling requirements..."
pip install insightface==0.7.3 onnxruntime-gpu==1.13.1 face-alignment==1.3.5 loguru yacs trimesh tqdm
pip install chumpy scikit-image opencv-python numpy==1.23.5

echo -e "\nSanity check of the GPU setup..."
nvidia-smi
python -c "import torch; print('cuda available:', torch.cuda.is_available())"

echo -e "\nInstallation has finished!"
