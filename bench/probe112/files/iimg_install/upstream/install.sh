#!/usr/bin/env bash
# One-shot environment setup for InternImage classification.
# Requires: conda, CUDA 11.3 driver, gcc >= 7.5
set -e

ENV_NAME=${ENV_NAME:-internimage}
PY_VER=3.9

conda create -n ${ENV_NAME} python=${PY_VER} -y
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate ${ENV_NAME}

# PyTorch 1.11 built against CUDA 11.3
pip install torch==1.11.0+cu113 torchvision==0.12.0+cu113 -f https://download.pytorch.org/whl/torch_stable.html

# mmcv-full prebuilt for cu113/torch1.11 (needed for the detection/segmentation heads)
pip install -U openmim
pip install mmcv-full==1.5.0 -f https://download.openmmlab.com/mmcv/dist/cu113/torch1.11.0/index.html

pip install timm==0.6.11 mmdet==2.28.1
pip install opencv-python termcolor yacs pyyaml scipy
pip install numpy==1.26.4 pydantic==1.10.13 yapf==0.40.1

# DCNv3 operator: either install a prebuilt wheel ...
if [ "${USE_PREBUILT_DCNV3:-0}" = "1" ]; then
    pip install https://github.com/OpenGVLab/InternImage/releases/download/whl_files/DCNv3-1.0+cu113torch1.11.0-cp39-cp39-linux_x86_64.whl
else
    # ... or compile it (needs nvcc from CUDA 11.3 on PATH)
    export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-11.3}
    cd ./ops_dcnv3
    sh ./make.sh
    # unit test (should see all checking is True)
    python test.py
    cd ..
fi

python -c "import torch, DCNv3; print(torch.__version__, torch.cuda.is_available())"
