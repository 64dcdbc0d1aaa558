#!/bin/bash
# Build a Python virtual environment for GNS on a GPU cluster node.
# Usage: source build_venv.sh
#
# Assumes an Lmod-based module system (TACC Frontera/Lonestar6 style).

module reset
module load gcc/9.1.0
module load cuda/11.8
module load python3/3.9.2

export CUDA_HOME=${TACC_CUDA_DIR:-/usr/local/cuda-11.8}
export LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH}

# Create the virtual environment next to the repository
python3 -m venv venv-gns
source venv-gns/bin/activate

which python
python -m pip install --upgrade pip setuptools wheel

# PyTorch + CUDA 11.8 wheels
python -m pip install torch==2.0.1 torchvision==0.15.2 --index-url https://download.pytorch.org/whl/cu118

# PyG and its compiled extensions (must match the torch/CUDA combination above)
python -m pip install torch_geometric==2.3.1
python -m pip install torch-scatter torch-sparse torch-cluster -f https://data.pyg.org/whl/torch-2.0.1+cu118.html

# Everything else
python -m pip install -r requirements.txt

# Sanity check: torch sees the GPUs and torch_cluster was built with CUDA
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())"
python -c "import torch, torch_cluster; x = torch.rand(64, 3, device='cuda'); print(torch_cluster.radius_graph(x, r=0.5).shape)"

# Test GNS
# Run the unit tests on the login node (CPU) before submitting GPU jobs
python -m pytest test/
