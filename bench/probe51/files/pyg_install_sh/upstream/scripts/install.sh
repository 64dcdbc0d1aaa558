#!/usr/bin/env bash
# Environment setup for the GNN benchmark suite (PyG + DGL + OGB).
#
#   bash scripts/install.sh            # CUDA 11.8 wheels (default)
#   CUDA=cu121 bash scripts/install.sh # CUDA 12.1 wheels
#   CUDA=cpu bash scripts/install.sh   # CPU-only
#
set -euo pipefail

TORCH=${TORCH:-2.1.0}
CUDA=${CUDA:-cu118}
DGL_VERSION=${DGL_VERSION:-1.1.3}
PYTHON=${PYTHON:-python3}
ENV_NAME=${ENV_NAME:-gnn}

echo "== torch ${TORCH} / ${CUDA} =="

if ! command -v conda >/dev/null 2>&1; then
    echo "conda not found; installing into the current interpreter"
else
    if ! conda env list | grep -q "^${ENV_NAME} "; then
        conda create -y -n "${ENV_NAME}" python=3.10
    fi
    # shellcheck disable=SC1091
    source "$(conda info --base)/etc/profile.d/conda.sh"
    conda activate "${ENV_NAME}"
fi

# ---------------------------------------------------------------------------
# Sanity checks on the driver / toolkit
# ---------------------------------------------------------------------------
if [[ "${CUDA}" != "cpu" ]]; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    if command -v nvcc >/dev/null 2>&1; then
        nvcc --version | tail -n 1
    else
        echo "nvcc not found: source builds of torch-scatter/torch-sparse will be CPU-only"
    fi
    export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
    export PATH="${CUDA_HOME}/bin:${PATH}"
    export LD_LIBRARY_PATH="${CUDA_HOME}/lib64:${LD_LIBRARY_PATH:-}"
fi

# ---------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------
${PYTHON} -m pip install --upgrade pip wheel setuptools
${PYTHON} -m pip install "torch==${TORCH}" torchvision torchaudio \
    --index-url "https://download.pytorch.org/whl/${CUDA}"

# ---------------------------------------------------------------------------
# PyG and its compiled companions (prebuilt wheels per torch/CUDA combo)
# ---------------------------------------------------------------------------
${PYTHON} -m pip install torch_geometric
${PYTHON} -m pip install pyg_lib torch_scatter torch_sparse torch_cluster torch_spline_conv \
    -f "https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html"

# ---------------------------------------------------------------------------
# DGL (separate wheel index per CUDA version)
# ---------------------------------------------------------------------------
${PYTHON} -m pip install "dgl==${DGL_VERSION}" -f "https://data.dgl.ai/wheels/${CUDA}/repo.html"
${PYTHON} -m pip install torchdata==0.7.0 pydantic

# ---------------------------------------------------------------------------
# OGB + misc
# ---------------------------------------------------------------------------
${PYTHON} -m pip install ogb>=1.3.6 torchmetrics tensorboard wandb pyyaml tqdm

# Optional: fused kernels for equivariant models / graph transformers.
if [[ "${WITH_EXTRAS:-0}" == "1" ]]; then
    ${PYTHON} -m pip install e3nn mace-torch
    ${PYTHON} -m pip install cuequivariance-torch cuequivariance-ops-torch-cu12
    MAX_JOBS=8 ${PYTHON} -m pip install flash-attn --no-build-isolation
fi

# ---------------------------------------------------------------------------
# Verify
# ---------------------------------------------------------------------------
${PYTHON} - <<'EOF'
import torch
import torch_geometric
print("torch", torch.__version__, "cuda", torch.version.cuda,
      "available", torch.cuda.is_available())
print("pyg", torch_geometric.__version__)
import torch_geometric.typing as t
print("pyg-lib", t.WITH_PYG_LIB, "torch-scatter", t.WITH_TORCH_SCATTER,
      "torch-sparse", t.WITH_TORCH_SPARSE)
import dgl
print("dgl", dgl.__version__, "cuda build:", dgl.backend.backend_name)
assert torch.cuda.is_available(), "CUDA not visible from PyTorch"
EOF

echo "done."
