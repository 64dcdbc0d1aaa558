#!/usr/bin/env bash
# ------------------------------------------------------------------------------------------------
# Deformable DETR
# Copyright (c) 2020 SenseTime. All Rights Reserved.
# Licensed under the Apache License, Version 2.0 [see LICENSE for details]
# ------------------------------------------------------------------------------------------------
# Modified from https://github.com/chengdazhi/Deformable-Convolution-V2-PyTorch/tree/pytorch_1.0.0
# ------------------------------------------------------------------------------------------------

# Build the MultiScaleDeformableAttention CUDA op.  Needs nvcc on PATH and a CUDA-enabled torch.
# On a login node without a GPU, export FORCE_CUDA=1 and TORCH_CUDA_ARCH_LIST first.
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-"6.0;7.0;7.5;8.0;8.6"}
python setup.py build install
