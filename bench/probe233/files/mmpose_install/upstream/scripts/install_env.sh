#!/usr/bin/env bash
# Create the conda environment used for the AP-10K / Animal Kingdom experiments
# (mmpose 0.x + mmdet 2.x on top of mmcv-full).
#
#   bash scripts/install_env.sh            # env "openmmlab", CUDA 11.3 wheels
#   CUDA=cu116 ENV_NAME=mmpose bash scripts/install_env.sh
#
# mmcv-full ships compiled CUDA ops (RoIAlign, NMS, DeformConv, ...): the wheel
# must match both the CUDA runtime and the torch version, otherwise
# `import mmcv.ops` fails with an undefined symbol error.
set -e

ENV_NAME=${ENV_NAME:-openmmlab}
CUDA=${CUDA:-cu113}
TORCH=${TORCH:-1.12.1}
TORCHVISION=${TORCHVISION:-0.13.1}
MMCV=${MMCV:-1.7.1}

conda create -n "${ENV_NAME}" python=3.8 -y
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate "${ENV_NAME}"

# PyTorch with the CUDA 11.3 runtime from the pytorch channel
conda install pytorch=="${TORCH}" torchvision=="${TORCHVISION}" cudatoolkit=11.3 -c pytorch -y

# nvcc is only needed if mmcv-full has to be built from source
nvcc --version | grep release || echo "nvcc not found: using the prebuilt mmcv-full wheel"

pip install -U openmim
pip install "mmcv-full==${MMCV}" -f "https://download.openmmlab.com/mmcv/dist/${CUDA}/torch1.12/index.html"
pip install "mmdet==2.28.2"

# mmpose itself (editable) and its extra requirements
pip install -r requirements/build.txt
pip install -r requirements/runtime.txt
pip install -v -e .

# xtcocotools must be built against the numpy we just installed
pip install --no-binary xtcocotools xtcocotools

echo "---- sanity checks ----"
python -c "import torch, mmcv; print(torch.__version__, torch.cuda.is_available(), mmcv.__version__)"
python -c "from mmcv.ops import get_compiling_cuda_version, get_compiler_version; print(get_compiling_cuda_version(), get_compiler_version())"
python -c "import mmpose, mmdet; print('mmpose', mmpose.__version__, 'mmdet', mmdet.__version__)"
