#!/usr/bin/env bash
# One-time environment setup for the SSL repo (conda + CUDA 11.3 + NVIDIA apex).
set -e

ENV_NAME=${ENV_NAME:-ssl}

conda create -n ${ENV_NAME} python=3.8 -y
source activate ${ENV_NAME}

conda install -y pytorch==1.12.1 torchvision==0.13.1 cudatoolkit=11.3 -c pytorch
pip install -r requirements.txt

# apex is only needed for SwAV (LARC, apex SyncBN, O1 mixed precision)
export CUDA_HOME=/usr/local/cuda-11.3
git clone https://github.com/NVIDIA/apex /tmp/apex
cd /tmp/apex
pip install -v --disable-pip-version-check --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./
cd -

# sanity checks
nvcc --version
python -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.device_count())"
python -c "import apex; from apex.parallel.LARC import LARC; print('apex ok')"
echo "environment ${ENV_NAME} ready"
