#!/usr/bin/env bash
# Create the conda environment used by the graph and time-series experiments.
#   bash scripts/install_env.sh [env-name]
set -e

ENV_NAME=${1:-tsgraph}
PYTHON_VERSION=3.10
TORCH_VERSION=2.1.0
CUDA_TAG=cu121

if ! command -v conda >/dev/null 2>&1; then
    echo "conda not found; install Miniforge first" >&2
    exit 1
fi

eval "$(conda shell.bash hook)"
conda create -y -n "${ENV_NAME}" python=${PYTHON_VERSION}
conda activate "${ENV_NAME}"

# --- PyTorch ---------------------------------------------------------------
pip install torch==${TORCH_VERSION} torchvision==0.16.0 \
    --index-url https://download.pytorch.org/whl/${CUDA_TAG}

# sanity check: fail early if the GPU build did not land
python - <<'PY'
import torch
assert torch.cuda.is_available(), "CUDA build of torch expected"
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())
PY

# --- graph libraries -------------------------------------------------------
pip install dgl -f https://data.dgl.ai/wheels/torch-2.1/${CUDA_TAG}/repo.html
pip install torch_geometric==2.4.0
pip install pyg_lib torch_scatter torch_sparse torch_cluster \
    -f https://data.pyg.org/whl/torch-${TORCH_VERSION}+${CUDA_TAG}.html
pip install ogb==1.3.6

# --- time series -----------------------------------------------------------
pip install -r requirements.txt
pip install "lightning>=2.1,<2.3" pytorch-forecasting==1.0.0 "gluonts[torch]==0.14.*"
pip install "chronos-forecasting @ git+https://github.com/amazon-science/chronos-forecasting.git"

# --- optional: fused kernels ----------------------------------------------
if [[ "${WITH_MAMBA:-0}" == "1" ]]; then
    export TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"
    pip install causal-conv1d==1.2.0 mamba-ssm==1.2.0 --no-build-isolation
fi

# --- checks ----------------------------------------------------------------
python -c "import dgl; print('dgl', dgl.__version__, 'cuda', dgl.backend.backend_name)"
python -c "import torch_geometric, torch_scatter; print('pyg', torch_geometric.__version__)"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv

echo "environment ${ENV_NAME} ready"
