#!/usr/bin/env bash
# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.
#
# Environment used for the Graphormer paper results:
#   python 3.9, CUDA 11.1 driver, PyTorch 1.9.1 (LTS-compatible build).
# Run inside a fresh conda env:  conda create -n graphormer python=3.9 && conda activate graphormer

set -ex

# install requirements
pip install torch==1.9.1+cu111 torchaudio==0.9.1 -f https://download.pytorch.org/whl/torch_stable.html
pip install lmdb
pip install torch-scatter==2.0.9 -f https://pytorch-geometric.com/whl/torch-1.9.0+cu111.html
pip install torch-sparse==0.6.12 -f https://pytorch-geometric.com/whl/torch-1.9.0+cu111.html
pip install torch-geometric==1.7.2
pip install tensorboardX==2.4.1
pip install ogb==1.3.2
pip install rdkit-pypi==2021.9.3
pip install dgl-cu111==0.7.2 -f https://data.dgl.ai/wheels/repo.html
pip install Cython==0.29.24

# sanity check that the GPU build was picked up
python -c "import torch; assert torch.cuda.is_available(), 'no CUDA device visible'; print(torch.version.cuda)"

cd fairseq
# if fairseq submodule has not been checked out, run:
# git submodule update --init --recursive
pip install . --no-build-isolation
python setup.py build_ext --inplace

cd ../graphormer/data
# Cython shortest-path / edge-path preprocessing (runs on CPU)
python setup.py build_ext --inplace
