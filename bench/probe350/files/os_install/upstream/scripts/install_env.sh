#!/bin/bash
# Set up the conda environment used for the Oscar / VinVL captioning runs.
# Mirrors INSTALL.md; run from the directory that should hold the repos.
set -e

ENV_NAME=${ENV_NAME:-oscar}
conda create --name $ENV_NAME python=3.7 -y
source activate $ENV_NAME

# PyTorch 1.7 with CUDA 10.1 (the V100 nodes run driver 418)
conda install -y pytorch==1.7.0 torchvision==0.8.0 cudatoolkit=10.1 -c pytorch

export INSTALL_DIR=$PWD

# apex: needed for --fp16 (amp O1) and for FusedLayerNorm in BertLayerNorm
cd $INSTALL_DIR
git clone https://github.com/NVIDIA/apex.git
cd apex
python setup.py install --cuda_ext --cpp_ext

# oscar itself (pure python) + coco_caption evaluation toolkit
cd $INSTALL_DIR
git clone --recursive git@github.com:microsoft/Oscar.git
cd Oscar/coco_caption
./get_stanford_models.sh
cd ..
python setup.py build develop

# remaining python requirements
pip install -r requirements.txt

# sanity check: should print True and the number of visible GPUs
python -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"

unset INSTALL_DIR
