#!/bin/bash

# Start from directory of script
cd "$(dirname "${BASH_SOURCE[0]}")"

# Set up automatic conda environment.
# Edit CONDA_HOME if your conda lives somewhere else.
CONDA_HOME=${CONDA_HOME:-$HOME/miniconda3}
RECIPE=${RECIPE:-rome}
ENV_NAME=${ENV_NAME:-${RECIPE}}
echo "Creating conda environment ${ENV_NAME}"

if [[ ! $(type -P conda) ]]
then
    echo "conda not in PATH"
    echo "read: https://conda.io/docs/user-guide/install/index.html"
    exit 1
fi

if df "${HOME}/.conda" --type=afs > /dev/null 2>&1
then
    echo "Not installing: your ~/.conda directory is on AFS."
    echo "Use 'ln -s /some/nfs/dir ~/.conda' to avoid using up your AFS quota."
    exit 1
fi

# Make sure the driver is new enough for the pytorch-cuda=11.8 build
if ! command -v nvidia-smi > /dev/null 2>&1
then
    echo "nvidia-smi not found; the ${RECIPE} environment expects an NVIDIA GPU."
    exit 1
fi
DRIVER_VERSION=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
echo "Found NVIDIA driver ${DRIVER_VERSION}"

# Build new environment: torch and torch vision from source
# CUDA_HOME is needed because higher-level deps may build small extensions
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda-11.8}
conda env create --name=${ENV_NAME} -f ${RECIPE}.yml

# Set up CUDA_HOME to set itself up correctly on every source activate
# https://stackoverflow.com/questions/31598963
mkdir -p ${CONDA_HOME}/envs/${ENV_NAME}/etc/conda/activate.d
echo "export CUDA_HOME=${CUDA_HOME}" > \
    ${CONDA_HOME}/envs/${ENV_NAME}/etc/conda/activate.d/CUDA_HOME.sh

source ${CONDA_HOME}/bin/activate ${ENV_NAME}
python -c "import torch; print('torch', torch.__version__, 'cuda available:', torch.cuda.is_available())"
