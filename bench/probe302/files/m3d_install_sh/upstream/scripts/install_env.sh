#!/bin/bash
# Mask3D environment (CUDA 11.3). Run from the repository root:
#   bash scripts/install_env.sh
set -e

conda env create -f environment.yml
eval "$(conda shell.bash hook)"
conda activate mask3d_cuda113

pip3 install torch==1.12.1+cu113 torchvision==0.13.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113
pip3 install torch-scatter -f https://data.pyg.org/whl/torch-1.12.1+cu113.html
pip3 install 'git+https://github.com/facebookresearch/detectron2.git@710e7795d0eeadf9def0e7ef957eea13532e34cf' --no-deps

mkdir -p third_party
cd third_party

# MinkowskiEngine: build the CUDA kernels even if the build machine has no GPU attached
git clone --recursive "https://github.com/NVIDIA/MinkowskiEngine"
cd MinkowskiEngine
git checkout 02fc608bea4c0549b0a7b00ca1bf15dee4a0b228
python setup.py install --force_cuda --blas=openblas

cd ..
git clone https://github.com/ScanNet/ScanNet.git
cd ScanNet/Segmentator
git checkout 3e5726500896748521a6ceb81271b0f5b2c0e7d2
make

# furthest point sampling (CUDA extension)
cd ../../pointnet2
python setup.py install

cd ../../
pip3 install pytorch-lightning==1.7.2

python -c "import torch, MinkowskiEngine as ME; print(torch.__version__, torch.cuda.is_available(), ME.__version__)"
