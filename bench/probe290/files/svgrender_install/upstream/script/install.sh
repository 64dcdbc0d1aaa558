#!/bin/bash
# PyTorch-SVGRender environment setup
# Tested on Ubuntu 20.04 / 22.04 with CUDA 11.8 and an RTX 3090 / A100.
set -e

ENV_NAME=${ENV_NAME:-svgrender}
PY_VERSION=3.10

# check the driver before spending 20 minutes in conda
if ! command -v nvidia-smi &> /dev/null; then
  echo "nvidia-smi not found: a CUDA capable GPU + driver is required."
  exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv

eval "$(conda shell.bash hook)"
conda create -n ${ENV_NAME} python=${PY_VERSION} -y
conda activate ${ENV_NAME}

echo "=> Installing pytorch..."
conda install -y pytorch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 pytorch-cuda=11.8 -c pytorch -c nvidia
# conda install -y pytorch==1.12.1 torchvision==0.13.1 torchaudio==0.12.1 cudatoolkit=11.3 -c pytorch

echo "=> Installing common python libraries..."
pip install hydra-core omegaconf
pip install freetype-py shapely svgutils cairosvg
pip install opencv-python scikit-image matplotlib visdom wandb BeautifulSoup4
pip install numba
pip install numpy scipy scikit-fmm einops timm fairscale==0.4.13
pip install accelerate==0.25.0 transformers==4.36.2 safetensors datasets

echo "=> Installing CLIP..."
pip install easydict
pip install ftfy regex tqdm
pip install git+https://github.com/openai/CLIP.git

echo "=> Installing diffusers and xformers..."
pip install diffusers==0.20.2
pip install xformers==0.0.22.post7 --index-url https://download.pytorch.org/whl/cu118

echo "=> Installing diffvg..."
git clone https://github.com/BachiLi/diffvg.git
cd diffvg
git submodule update --init --recursive
conda install -y -c anaconda cmake
conda install -y -c conda-forge ffmpeg
pip install svgwrite svgpathtools cssutils torch-tools
# build the CUDA rasterizer even if this shell cannot see a GPU (e.g. on a login node)
export DIFFVG_CUDA=1
python setup.py install
cd ..

echo "=> Checking the install..."
python -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.version.cuda)"
python -c "import pydiffvg; print('pydiffvg use gpu:', pydiffvg.get_use_gpu())"

echo "The installation is completed!"
