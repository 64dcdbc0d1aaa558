#!/bin/bash
# Build XGBoost (CUDA + NCCL, for multi-GPU dask training) and LightGBM (CUDA learner) from source
# and install them into the active environment. CatBoost's PyPI wheel already contains its GPU code.
#
#   bash scripts/build_gbdt_cuda.sh            # default arch list covers V100 .. H100
#   GPU_ARCHS="80" bash scripts/build_gbdt_cuda.sh
set -ex

XGB_VERSION=${XGB_VERSION:-v2.0.3}
LGBM_VERSION=${LGBM_VERSION:-v4.3.0}
BUILD_DIR=${BUILD_DIR:-/tmp/gbdt-build}
JOBS=${JOBS:-$(nproc)}

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=${CUDA_HOME}/bin:${PATH}
export LD_LIBRARY_PATH=${CUDA_HOME}/lib64:${LD_LIBRARY_PATH:-}
NCCL_ROOT=${NCCL_ROOT:-/usr/lib/x86_64-linux-gnu}
GPU_ARCHS=${GPU_ARCHS:-"70;75;80;86;90"}

nvcc --version
cmake --version
mkdir -p "${BUILD_DIR}"
cd "${BUILD_DIR}"

# ----------------------------------------------------------------------------- XGBoost
rm -rf xgboost
git clone --recursive --depth 1 --branch "${XGB_VERSION}" https://github.com/dmlc/xgboost
cd xgboost
mkdir -p build && cd build
cmake .. -GNinja -DUSE_CUDA=ON -DUSE_NCCL=ON -DNCCL_ROOT="${NCCL_ROOT}" -DCMAKE_CUDA_ARCHITECTURES="${GPU_ARCHS}" \
    -DBUILD_WITH_CUDA_CUB=ON -DUSE_OPENMP=ON
ninja -j "${JOBS}"
cd ../python-package
pip install --no-deps --no-build-isolation . -v
cd "${BUILD_DIR}"

# ----------------------------------------------------------------------------- LightGBM
rm -rf LightGBM
git clone --recursive --depth 1 --branch "${LGBM_VERSION}" https://github.com/microsoft/LightGBM
cd LightGBM
cmake -B build -S . -DUSE_CUDA=1 -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "${JOBS}"
sh ./build-python.sh install --precompile
cd "${BUILD_DIR}"

# ----------------------------------------------------------------------------- CatBoost
pip install --upgrade "catboost==1.2.2"

# ----------------------------------------------------------------------------- checks
python - <<'PY'
import sys
import xgboost
info = xgboost.build_info()
print("xgboost", xgboost.__version__, "USE_CUDA", info.get("USE_CUDA"), "USE_NCCL", info.get("USE_NCCL"))
sys.exit(0 if info.get("USE_CUDA") and info.get("USE_NCCL") else 1)
PY
python -c "import lightgbm; print('lightgbm', lightgbm.__version__)"
python -c "from catboost.utils import get_gpu_device_count; print('catboost GPUs:', get_gpu_device_count())"

echo "done: GBDT libraries built for CUDA archs ${GPU_ARCHS}"
