#!/bin/bash
# Environment used for the paper experiments (CUDA 11.3, V100 / RTX 3090).
set -e

conda create -n wsrglow python=3.8 -y
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate wsrglow

pip install torch==1.10.1+cu113 torchaudio==0.10.1+cu113 -f https://download.pytorch.org/whl/torch_stable.html
pip install librosa==0.8.1 scipy tensorboardX==2.4 numpy==1.21.4 tqdm

# apex is only needed for fp16_run=true
git clone https://github.com/NVIDIA/apex
cd apex
pip install -v --disable-pip-version-check --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./
cd ..

python -c "import torch; print(torch.__version__, torch.cuda.is_available())"
