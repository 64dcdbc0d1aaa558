#!/bin/bash
# Environment used for all experiments in the paper (8x V100 / A100, CUDA 11.3).
set -e

pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113
pip install 'git+https://github.com/facebookresearch/detectron2.git'
pip install -r requirements.txt

# sanity check: should print the torch version and `True`
python -c "import torch; print(torch.__version__, torch.cuda.is_available())"
