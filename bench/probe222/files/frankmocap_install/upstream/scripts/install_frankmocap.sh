#!/usr/bin/env bash
# Copyright (c) Facebook, Inc. and its affiliates.
#
# One-shot environment setup for FrankMocap (hand + body + whole-body demos).
# Tested on Ubuntu 18.04 / 20.04 with CUDA 10.1 and a single RTX 2080Ti.
#
# usage: bash scripts/install_frankmocap.sh [env_name]
set -e

ENV_NAME=${1:-venv_frankmocap}

echo "Creating conda env ${ENV_NAME}"
conda create -y -n ${ENV_NAME} python=3.7
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate ${ENV_NAME}

# system libs for OpenGL rendering (renderer_type=opengl) and video I/O
sudo apt-get install -y libglu1-mesa libxi-dev libxmu-dev libglu1-mesa-dev freeglut3-dev libosmesa6-dev
sudo apt-get install -y ffmpeg

# CUDA runtime + pytorch built for cu101
conda install -y cudatoolkit=10.1 cudnn=7.6.0
pip install torch==1.6.0+cu101 torchvision==0.7.0+cu101 -f https://download.pytorch.org/whl/torch_stable.html

# detectron2 (used by the third-view hand detector); builds its CUDA kernels against the local toolkit
export CUDA_HOME=/usr/local/cuda-10.1
python -m pip install 'git+https://github.com/facebookresearch/detectron2.git'

# other python deps
pip install -r docs/requirements.txt

# pytorch3d renderer (optional, renderer_type=pytorch3d)
pip install "git+https://github.com/facebookresearch/pytorch3d.git@stable"

echo "Installing third-party detectors"
mkdir -p detectors

# body pose estimator (lightweight openpose)
cd detectors
git clone https://github.com/jhugestar/lightweight-human-pose-estimation.pytorch.git body_pose_estimator
cd -

# hand detector (ego-centric, faster-rcnn with compiled ROI / NMS layers)
cd detectors
git clone https://github.com/ddshan/hand_object_detector
cd -
cd detectors/hand_object_detector/lib
python setup.py build develop
cd -

# hand-only detector (third-view, detectron2 config + weights)
cd detectors
git clone https://github.com/ddshan/hand_detector.d2.git hand_only_detector
cd -

echo "Downloading extra data and pretrained weights"
sh scripts/download_data_body_module.sh
sh scripts/download_data_hand_module.sh
sh scripts/download_sample_data.sh

# quick sanity check: the demo asserts a CUDA device is present
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())"
nvidia-smi --query-gpu=name,memory.total --format=csv

echo "Done. Run e.g.:"
echo "  CUDA_VISIBLE_DEVICES=0 python -m demo.demo_handmocap --input_path ./sample_data/han_hand_short.mp4 --out_dir ./mocap_output --view_type ego_centric"
