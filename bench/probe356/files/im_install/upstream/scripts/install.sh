#!/bin/bash
# Copyright (C) 2021 NVIDIA CORPORATION & AFFILIATES.  All rights reserved.
#
# This work is made available under the Nvidia Source Code License-NC.
# To view a copy of this license, check out LICENSE.md
sudo apt-get update && sudo apt-get -y install libsm6 libxext6 libxrender-dev \
    ffmpeg libgl1-mesa-glx libjpeg-dev zlib1g-dev
CURRENT=$(pwd)
pip install --upgrade -r scripts/requirements.txt

# Build the CUDA ops used by the flow network (vid2vid), the StyleGAN2-style
# generators and the resample layer. They need nvcc and CUDA_HOME.
nvcc --version
for p in correlation channelnorm resample2d bias_act upfirdn2d; do
    cd imaginaire/third_party/${p};
    rm -rf build dist *info;
    python setup.py install;
    cd ${CURRENT};
done

for p in gancraft/voxlib; do
  cd imaginaire/model_utils/${p};
  make all
  cd ${CURRENT};
done
