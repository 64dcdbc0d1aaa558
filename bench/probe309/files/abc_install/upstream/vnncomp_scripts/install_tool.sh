#!/bin/bash
# VNN-COMP install script for alpha-beta-CROWN.
# Usage: install_tool.sh v1
# Run once on a fresh AWS instance (p3.2xlarge / g5.8xlarge, Ubuntu 22.04,
# NVIDIA driver already installed by the AMI).

TOOL_NAME=alpha-beta-CROWN
VERSION_STRING=v1
if [[ $# -ne 1 ]]; then
    echo "Expected a single argument (got $#): '$VERSION_STRING' (version string)"
    exit 1
fi

if [[ "$1" != ${VERSION_STRING} ]]; then
    echo "Expected first argument (version string) '$VERSION_STRING', got '$1'"
    exit 1
fi

echo "Installing $TOOL_NAME"
TOOL_DIR=$(dirname $(dirname $(realpath $0)))

export DEBIAN_FRONTEND=noninteractive
sudo -E apt-get update
sudo -E apt-get install -y build-essential wget curl git

# Sanity check: the verifier is GPU-only in the competition setting.
if ! nvidia-smi > /dev/null 2>&1; then
    echo "nvidia-smi failed: no NVIDIA GPU/driver found."
    exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv

# Install miniconda
if [ ! -d "${HOME}/miniconda3" ]; then
    wget -q https://repo.anaconda.com/miniconda/Miniconda3-latest-Linux-x86_64.sh -O /tmp/miniconda.sh
    bash /tmp/miniconda.sh -b -p ${HOME}/miniconda3
fi
source ${HOME}/miniconda3/etc/profile.d/conda.sh

# Create conda environment from the yaml file (includes pytorch-cuda).
conda env remove --name alpha-beta-crown -y || true
conda env create --name alpha-beta-crown -f ${TOOL_DIR}/complete_verifier/environment.yaml
conda activate alpha-beta-crown

# Fallback if the conda solve of the CUDA build fails: install the wheels
# from the PyTorch CUDA index directly.
python -c "import torch; assert torch.cuda.is_available()" || \
    pip install torch==2.2.1 torchvision==0.17.1 --index-url https://download.pytorch.org/whl/cu121

# Build the optional auto_LiRPA CUDA kernels ahead of time so that they are
# not JIT-compiled during the timed run.
cd ${TOOL_DIR}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
AUTOLIRPA_ENABLE_CUDA_BUILD=1 python auto_LiRPA/cuda_utils.py install || \
    echo "Warning: CUDA kernels of auto_LiRPA were not built."

# Gurobi license for the MIP-based refinement (bab-refine / cplex cuts).
if [ -n "${GUROBI_LICENSE_KEY}" ]; then
    grbgetkey -q ${GUROBI_LICENSE_KEY}
fi

# Install IBM CPLEX for GCP-CROWN cuts (academic license, binary shipped by the organizers).
if [ -f /tmp/cplex_studio2210.linux_x86_64.bin ]; then
    chmod +x /tmp/cplex_studio2210.linux_x86_64.bin
    sudo /tmp/cplex_studio2210.linux_x86_64.bin -f ${TOOL_DIR}/vnncomp_scripts/cplex_response.txt
    make -C ${TOOL_DIR}/complete_verifier/cuts/CPLEX_cuts/
fi

# Quick self-test on GPU.
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
python ${TOOL_DIR}/complete_verifier/abcrown.py --config ${TOOL_DIR}/complete_verifier/exp_configs/tutorial_examples/basic_vnnlib_example.yaml --timeout 10 > /dev/null && echo "Self-test passed."
