#!/bin/bash
# rPPG-Toolbox environment setup.
# Usage: bash setup.sh [conda|uv]
# Creates the rppg-toolbox environment, installs PyTorch with CUDA 12.1
# and builds the Mamba selective-scan kernels used by PhysMamba / RhythmMamba.

set -e

MODE=${1:-conda}
ENV_NAME=rppg-toolbox
PY_VERSION=3.8

if [ "$MODE" == "conda" ]; then
    echo "Setting up conda environment '$ENV_NAME'..."
    conda remove --name $ENV_NAME --all -y || true
    conda create -n $ENV_NAME python=$PY_VERSION -y
    eval "$(conda shell.bash hook)"
    conda activate $ENV_NAME
elif [ "$MODE" == "uv" ]; then
    echo "Setting up uv virtual environment..."
    uv venv --python $PY_VERSION
    source .venv/bin/activate
    PIP="uv pip"
else
    echo "Unknown mode: $MODE (expected conda or uv)"
    exit 1
fi
PIP=${PIP:-pip}

# PyTorch (CUDA 12.1 wheels)
$PIP install torch==2.1.2+cu121 torchvision==0.16.2+cu121 torchaudio==2.1.2+cu121 --index-url https://download.pytorch.org/whl/cu121

# Python dependencies
$PIP install -r requirements.txt

# Mamba kernels (needs nvcc from the CUDA toolkit on PATH)
echo "Building causal-conv1d and mamba from tools/mamba ..."
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
cd tools/mamba
python setup.py install
cd ../..

python -c "import torch; print('torch', torch.__version__, 'cuda available:', torch.cuda.is_available())"
echo "Done. Activate with: conda activate $ENV_NAME (or source .venv/bin/activate)"
