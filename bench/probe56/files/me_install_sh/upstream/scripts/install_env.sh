#!/usr/bin/env bash
# Set up the conda environment for FCGF / DGR-style registration experiments
# (MinkowskiEngine 0.5.x, PyTorch 1.9, CUDA 11.1).
#
#   bash scripts/install_env.sh [env-name]
#
set -euo pipefail

ENV_NAME=${1:-fcgf}
PY_VER=3.8
TORCH_VER=1.9.0
CUDA_VER=11.1
ME_TAG=v0.5.4

# ---------------------------------------------------------------------------
# 0. sanity checks
# ---------------------------------------------------------------------------
if ! command -v conda >/dev/null 2>&1; then
    echo "conda not found; install miniconda first" >&2
    exit 1
fi

if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi not found: this script expects an NVIDIA driver" >&2
    exit 1
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

export CUDA_HOME=/usr/local/cuda-${CUDA_VER}
export PATH=${CUDA_HOME}/bin:${PATH}
export LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH:-}
nvcc --version | tail -n 1

# ---------------------------------------------------------------------------
# 1. conda env + pytorch
# ---------------------------------------------------------------------------
eval "$(conda shell.bash hook)"
if ! conda env list | grep -qE "^${ENV_NAME} "; then
    conda create -y -n "${ENV_NAME}" python=${PY_VER}
fi
conda activate "${ENV_NAME}"

conda install -y pytorch=${TORCH_VER} torchvision cudatoolkit=${CUDA_VER} -c pytorch -c nvidia
conda install -y openblas-devel -c anaconda

# ---------------------------------------------------------------------------
# 2. MinkowskiEngine (compiled against the toolkit above)
# ---------------------------------------------------------------------------
export MAX_JOBS=${MAX_JOBS:-8}
pip install -U "git+https://github.com/NVIDIA/MinkowskiEngine@${ME_TAG}" -v --no-deps \
    --install-option="--blas_include_dirs=${CONDA_PREFIX}/include" \
    --install-option="--blas=openblas" \
    --install-option="--force_cuda"

# ---------------------------------------------------------------------------
# 3. the rest
# ---------------------------------------------------------------------------
pip install -r requirements.txt
pip install open3d==0.13.0 tensorboardX future-fstrings easydict joblib scikit-learn
# KNN on the GPU for the correspondence search in DGR
pip install pykeops==1.5

# ---------------------------------------------------------------------------
# 4. smoke test
# ---------------------------------------------------------------------------
python - <<'EOF'
import torch
import MinkowskiEngine as ME
print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
ME.print_diagnostics()
coords = torch.IntTensor([[0, 0, 0, 0], [0, 1, 0, 0]])
feats = torch.ones(2, 1)
x = ME.SparseTensor(feats, coordinates=coords, device="cuda")
conv = ME.MinkowskiConvolution(1, 4, kernel_size=3, dimension=3).cuda()
print("conv ok:", conv(x).F.shape)
EOF

echo "environment ${ENV_NAME} ready"
