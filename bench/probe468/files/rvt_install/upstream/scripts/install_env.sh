#!/usr/bin/env bash
# Creates the conda environment used for all RVT experiments.
# Tested with CUDA 11.7 drivers on A100 and RTX 3090/4090 machines.
#
#   bash scripts/install_env.sh [ENV_NAME]
set -e

ENV_NAME=${1:-rvt}
PYTHON_VERSION=3.9

conda create -y -n "${ENV_NAME}" python=${PYTHON_VERSION} pip
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate "${ENV_NAME}"

# PyTorch (CUDA 11.7 build)
conda install -y pytorch==1.13.1 torchvision==0.14.1 pytorch-cuda=11.7 -c pytorch -c nvidia

# Data loading / config
conda install -y h5py=3.8.0 blosc-hdf5-plugin=1.0.0 hydra-core=1.3.2 einops=0.6.0 tqdm numba -c conda-forge
conda install -y torchdata=0.5.1 -c pytorch

# Training / logging / evaluation
python -m pip install pytorch_lightning==1.8.6 wandb==0.14.0 \
    pandas==1.5.3 plotly==5.13.1 opencv-python==4.6.0.66 tabulate==0.9.0 \
    pycocotools==2.0.6 bbox-visualizer==0.1.0 StrEnum==0.4.10

# Detectron2 is not strictly required but speeds up the evaluation.
python -m pip install 'git+https://github.com/facebookresearch/detectron2.git'

# Sanity check
nvidia-smi
python -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0))"
echo "Environment ${ENV_NAME} is ready."
