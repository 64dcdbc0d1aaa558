#!/bin/bash
# Environment for TrOCR (fairseq-based). Tested on Ubuntu 18.04, CUDA 11.1, driver 460.
set -e

conda create -y -n trocr python=3.7
source activate trocr

pip install torch==1.9.0+cu111 torchvision==0.10.0+cu111 -f https://download.pytorch.org/whl/torch_stable.html
pip install pybind11
pip install -r requirements.txt

# fairseq pinned to the commit TrOCR was developed against
git clone https://github.com/pytorch/fairseq.git
cd fairseq
git checkout 7c758f7
pip install --editable ./
cd ..

# apex gives fused layer norm / fused adam for --fp16 training
git clone https://github.com/NVIDIA/apex
cd apex
pip install -v --disable-pip-version-check --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./
cd ..

python -c "import torch; print(torch.__version__, torch.cuda.is_available())"
